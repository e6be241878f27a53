package infodict

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anacrolix/torrent/bencode"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/goldentest"
)

var update = flag.Bool("update", false, "rewrite golden files")

// root32 is a BEP 52 pieces root: 32 bytes (of SHA-256).
var root32 = strings.Repeat("r", 32)

func TestParseInfo(t *testing.T) {
	// plen -1: piece_length null (no "piece length" key). Every other
	// column of an accepted dictionary is set, its zeros included.
	tests := []struct {
		name      string
		info      string
		wantErr   bool
		wantName  string
		wantValid bool
		wantFiles int32
		wantSize  int64
		plen      int64
	}{
		{"single file", "d6:lengthi100e4:name5:a.txt12:piece lengthi16384e6:pieces20:AAAAAAAAAAAAAAAAAAAAe", false, "a.txt", true, 1, 100, 16384},
		{"multi file", "d5:filesld6:lengthi1e4:pathl1:a1:beed6:lengthi2e4:pathl1:ceee4:name1:d12:piece lengthi1ee", false, "d", true, 2, 3, 1},
		{"invalid utf-8 name", "d6:lengthi1e4:name2:\xff\xfe12:piece lengthi1ee", false, "\uFFFD", false, 1, 1, 1},
		{"name.utf-8 fallback", "d6:lengthi1e4:name2:\xff\xfe10:name.utf-83:abc12:piece lengthi1ee", false, "abc", false, 1, 1, 1},
		{"private", "d6:lengthi1e4:name1:x12:piece lengthi1e7:privatei1ee", false, "x", true, 1, 1, 1},
		{"v2 file tree", "d9:file treed3:dird1:ad0:d6:lengthi5e11:pieces root32:" + root32 + "ee1:bd0:d6:lengthi6e11:pieces root32:" + root32 +
			"eeee12:meta versioni2e4:name1:x12:piece lengthi16384ee", false, "x", true, 2, 11, 16384},
		{"empty name, zero length", "d6:lengthi0e4:name0:12:piece lengthi16384e6:pieces0:e", false, "", true, 1, 0, 16384},
		{"empty name, empty file list", "d5:filesle4:name0:12:piece lengthi0ee", false, "", true, 0, 0, 0},
		{"no name", "d5:filesle12:piece lengthi0ee", true, "", false, 0, 0, 0},
		{"name.utf-8 alone", "d6:lengthi1e10:name.utf-83:abc12:piece lengthi1ee", false, "abc", true, 1, 1, 1},
		{"no piece length", "d6:lengthi7e4:name1:xe", false, "x", true, 1, 7, -1},
		{"no files", "d4:name1:x12:piece lengthi1ee", true, "", false, 0, 0, 0},
		{"negative length", "d6:lengthi-1e4:name1:x12:piece lengthi1ee", true, "", false, 0, 0, 0},
		{"negative piece length", "d6:lengthi1e4:name1:x12:piece lengthi-1ee", true, "", false, 0, 0, 0},
		{"negative file length", "d5:filesld6:lengthi-1e4:pathl1:aeee4:name1:de", true, "", false, 0, 0, 0},
		{"overflow", "d5:filesld6:lengthi9223372036854775807e4:pathl1:aeed6:lengthi1e4:pathl1:beee4:name1:de", true, "", false, 0, 0, 0},
		{"name not a string", "d6:lengthi1e4:namei5ee", true, "", false, 0, 0, 0},
		{"not a dict", "li1ee", true, "", false, 0, 0, 0},
		{"file tree not a dict", "d9:file treei1e4:name1:xe", true, "", false, 0, 0, 0},
		{"truncated", "d6:lengthi1e4:name", true, "", false, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse([]byte(tt.info))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if m.Name == nil || m.NameRaw == nil || m.FileCount == nil || m.TotalSize == nil {
				t.Fatalf("name %v, name_raw nil %v, file_count %v, total_size %v: want all set (known)",
					m.Name, m.NameRaw == nil, m.FileCount, m.TotalSize)
			}
			if *m.Name != tt.wantName || m.NameUTF8Valid != tt.wantValid || *m.FileCount != tt.wantFiles || *m.TotalSize != tt.wantSize {
				t.Fatalf("got name %q valid %v files %d size %d", *m.Name, m.NameUTF8Valid, *m.FileCount, *m.TotalSize)
			}
			if (tt.plen < 0) != (m.PieceLength == nil) || (m.PieceLength != nil && *m.PieceLength != tt.plen) {
				t.Fatalf("piece_length %v, want %d (-1: null)", m.PieceLength, tt.plen)
			}
			if string(m.InfoBytes) != tt.info {
				t.Fatal("info_bytes differ from the input")
			}
		})
	}
}

// TestParseInfoGolden decodes the info dictionaries in testdata/info and
// compares the metadata columns with the .golden.json files beside them
// (go test -run TestParseInfoGolden -update rewrites them).
func TestParseInfoGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/info/*.bencode")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			m, err := Parse(b)
			if err != nil {
				t.Fatal(err)
			}
			m.InfoBytes = nil
			got, _ := json.MarshalIndent(m, "", "  ")
			golden := strings.TrimSuffix(f, ".bencode") + ".golden.json"
			goldentest.Check(t, golden, append(got, '\n'), *update)
		})
	}
}

// FuzzParseInfo: info dictionaries from peers never panic the decoder,
// and accepted ones have consistent sizes and pass the strict checks
// (strict.go): a name, pieces of 20-byte hashes, a v2 dictionary's piece
// length a power of two of at least 16 KiB, a meta version (if any) an
// integer of at most 2, meta version 2 if and only if a file tree
// dictionary, no pad file in a file tree, and a hybrid's v1 files
// holding bytes (pads aside) its file tree's, as many and as long; and
// that anacrolix's decoder reads a plain v1 one's sizes and flags alike
// (checkAnacrolix).
func FuzzParseInfo(f *testing.F) {
	f.Add([]byte("d6:lengthi100e4:name5:a.txt12:piece lengthi16384e6:pieces20:AAAAAAAAAAAAAAAAAAAAe"))
	f.Add([]byte("d5:filesld6:lengthi1e4:pathl1:a1:beed6:lengthi2e4:pathl1:ceee4:name1:d12:piece lengthi1ee"))
	f.Add([]byte("d9:file treed3:dird1:ad0:d6:lengthi5eee1:bd0:d6:lengthi6eeeee4:name1:xe"))
	f.Add(bencode.MustMarshal(map[string]any{"name": "\xff", "length": 1, "private": 1}))
	f.Add([]byte("d6:lengthi1e4:name1:a4:name1:b12:piece lengthi1ee"))
	f.Add([]byte("d5:filesld4:pathl1:aeee4:name1:de"))                                // a file without length
	f.Add([]byte("d5:filesld6:lengthi1e4:pathleee4:name1:de"))                        // an empty path
	f.Add([]byte("d5:filesld4:attr1:l4:pathl1:aeed4:attr1:p6:lengthi1eee4:name1:de")) // a symlink, a pad without path
	f.Add([]byte("d6:lengthi1e4:name1:x6:pieces19:" + strings.Repeat("p", 19) + "e"))
	f.Add([]byte("d6:lengthi1e12:piece lengthi0ee"))
	f.Add([]byte("d9:file treed1:ad0:d6:lengthi1e11:pieces root31:" + root32[1:] + "ee1:bd0:d6:lengthi0eeee" +
		"12:meta versioni2e4:name1:x12:piece lengthi32768ee"))
	f.Add([]byte("d9:file treed1:ad0:d6:lengthi1e11:pieces root32:" + root32 + "e1:bi1eee12:meta versioni2e4:name1:x12:piece lengthi8192ee"))
	f.Add([]byte("d6:lengthi1e12:meta versioni3e4:name1:x12:piece lengthi16384ee")) // a newer version
	f.Add([]byte("d6:lengthi1e12:meta version1:24:name1:x12:piece lengthi16384ee")) // no integer
	f.Add([]byte("d9:file treed1:ad0:d4:attr1:p6:lengthi1e11:pieces root32:" + root32 + "eee" +
		"12:meta versioni2e4:name1:x12:piece lengthi16384ee")) // a pad in a file tree
	tree := "d9:file treed1:ad0:d6:lengthi1e11:pieces root32:" + root32 + "ee1:bd0:d6:lengthi5e11:pieces root32:" + root32 + "eee"
	f.Add([]byte(tree + "5:filesld6:lengthi1e4:pathl1:aeed4:attr1:p6:lengthi16383e4:pathl4:.pad1:0eed6:lengthi5e4:pathl1:beee" +
		"12:meta versioni2e4:name1:d12:piece lengthi16384ee")) // a hybrid whose views agree
	f.Add([]byte(tree + "5:filesld6:lengthi1e4:pathl1:aeed6:lengthi5e4:pathl1:beee" +
		"12:meta versioni2e4:name1:d12:piece lengthi16384ee")) // and one without its pad
	f.Add([]byte(tree + "5:filesld6:lengthi1e4:pathl1:aeed6:lengthi16383e4:pathl24:_____padding_file_0_____eed6:lengthi5e4:pathl1:beee" +
		"12:meta versioni2e4:name1:d12:piece lengthi16384ee")) // a hybrid padded BitComet's way
	f.Add([]byte("d9:file treed1:ad0:d4:attr1:h6:lengthi1e5:mtimei2e11:pieces root32:" + root32 + "ee1:ld0:d4:attr1:l6:lengthi0e" +
		"12:symlink pathl1:beeee5:filesld4:attr1:x6:lengthi1e4:pathl1:aeed4:attr1:l4:pathl1:le12:symlink pathl1:aeee" +
		"12:meta versioni2e4:name1:d12:piece lengthi16384ee")) // a hybrid whose views differ in attributes only
	f.Add([]byte("d9:file treed1:ld0:d4:attr1:l12:symlink pathl1:xeeee12:meta versioni2e4:name1:x12:piece lengthi16384ee")) // a symlink without length
	f.Add([]byte("d5:filesld4:attr1:l6:length1:54:pathl1:aeee4:name1:d12:piece lengthi16384ee"))                            // a symlink's length no integer
	f.Add([]byte("d6:lengthi1e12:meta versioni2e4:name1:x12:piece lengthi16384ee"))                                         // meta version 2, no file tree
	f.Add([]byte("d9:file treeli1ee6:lengthi1e12:meta versioni2e4:name1:x12:piece lengthi16384ee"))                         // a file tree no dictionary
	f.Add([]byte(tree + "5:filesld6:lengthi1e4:pathl1:ae10:path.utf-8l1:xeed4:attr1:p6:lengthi16383e4:pathl4:.pad1:0eed6:lengthi5e4:pathl1:beee" +
		"12:meta versioni2e4:name1:d12:piece lengthi16384ee")) // a hybrid whose path.utf-8 differs from its file tree
	f.Add([]byte(tree + "5:filesld6:lengthi1e4:pathl1:aeed4:attr1:p6:lengthi16000eed4:attr1:p6:lengthi383eed6:lengthi5e4:pathl1:beee" +
		"12:meta versioni2e4:name1:d12:piece lengthi16384ee")) // a hybrid with two pads in a gap
	f.Add([]byte("d9:file treed1:ad0:d6:lengthi1e11:pieces root32:" + root32 + "ee2:aed0:d6:lengthi0eee1:bd0:d6:lengthi5e11:pieces root32:" +
		root32 + "eee5:filesld6:lengthi1e4:pathl1:aeed4:attr1:p6:lengthi16383eed6:lengthi0e4:pathl1:xeed6:lengthi5e4:pathl1:beee" +
		"12:meta versioni2e4:name1:d12:piece lengthi16384ee")) // a hybrid whose empty file has another name in each view
	f.Add([]byte(tree + "6:lengthi1e4:name1:x12:piece lengthi16384ee"))     // a file tree, no meta version
	f.Add([]byte("d4:attr1:l6:lengthi-5e4:name1:d12:piece lengthi16384ee")) // a single-file symlink of a negative length
	f.Add([]byte("d5:filesld6:lengthi1e4:pathl1:ae10:path.utf-8leed4:attr1:p6:lengthi1e4:pathl1:pe10:path.utf-8lee" +
		"e4:name1:d12:piece lengthi16384ee")) // empty path.utf-8 lists, of a file and a pad
	f.Add([]byte("d6:lengthi1e4:name1:a10:name.utf-80:12:piece lengthi16384ee"))        // a single file's empty name.utf-8
	f.Add([]byte(tree + "5:filesle12:meta versioni2e4:name1:d12:piece lengthi16384ee")) // a hybrid of an empty files list
	f.Add([]byte("d9:file treed1:ed0:d6:lengthi0e11:pieces root31:" + root32[1:] + "eee" +
		"12:meta versioni2e4:name1:x12:piece lengthi16384ee")) // an empty file's pieces root of 31 bytes
	f.Add([]byte("d6:lengthi1e4:name1:a10:name.utf-8i1e12:piece lengthi16384ee"))   // name.utf-8 no string: name read
	f.Add([]byte("d6:lengthi1e4:nameli1ee10:name.utf-81:a12:piece lengthi16384ee")) // name no string: name.utf-8 read
	f.Add([]byte("d5:filesld6:lengthi1e10:path.utf-8l1:aeed6:lengthi1e4:pathli1ee10:path.utf-8l1:beee" +
		"4:name1:d12:piece lengthi16384ee")) // path.utf-8 read, path absent or holding a number
	f.Add([]byte(tree + "5:filesld6:lengthi1e4:pathle10:path.utf-8l1:aeed4:attr1:p6:lengthi16383e4:pathl4:.pad1:0eed6:lengthi5e4:pathl1:beee" +
		"12:meta versioni2e4:name1:d12:piece lengthi16384ee")) // a hybrid whose file is named by path.utf-8 alone
	f.Fuzz(func(t *testing.T, b []byte) {
		m, raw, err := parse(b, false)
		if err != nil {
			return
		}
		if v, err := Int(raw.MetaVersion); raw.MetaVersion != nil && (err != nil || v > 2) {
			t.Fatalf("meta version %q accepted in %q", raw.MetaVersion, b)
		}
		tr := raw.FileTree
		if tree := len(tr) > 0 && tr[0] == 'd'; tree != (string(raw.MetaVersion) == "i2e") {
			t.Fatalf("file tree %.40q with meta version %q accepted in %q", tr, raw.MetaVersion, b)
		}
		if len(tr) > 0 && tr[0] == 'd' {
			checkTreeAccepted(t, tr, &raw, &m, b)
		}
		if n, err := decodeValue(raw.NameB); raw.NameUTF8 == nil && (err != nil || !isString(n)) {
			t.Fatalf("no name accepted in %q", b)
		}
		if u, err := decodeValue(raw.NameUTF8B); err == nil && isString(u) && (raw.Name == nil && string(m.NameRaw) != u) {
			t.Fatalf("name_raw %q, not name.utf-8 %q, with no name in %q", m.NameRaw, u, b)
		}
		if u := raw.NameUTF8; raw.Files == nil && raw.Length != nil && u != nil && *u == "" {
			t.Fatalf("a single file's empty name.utf-8 accepted in %q", b)
		}
		for i := range raw.Files {
			if !validPathUTF8(&raw.Files[i]) {
				t.Fatalf("file %d's path.utf-8 %q accepted in %q", i, raw.Files[i].PathU, b)
			}
		}
		checkPathsAccepted(t, &raw, &m, b)
		checkAnacrolix(t, b, &raw, &m)
		if p, err := decodeValue(raw.Pieces); raw.Pieces != nil && (err != nil || len(p.(string))%20 != 0) {
			t.Fatalf("pieces %q accepted in %q", raw.Pieces, b)
		}
		if pl := m.PieceLength; string(raw.MetaVersion) == "i2e" && (pl == nil || *pl < 16384 || *pl&(*pl-1) != 0) {
			t.Fatalf("v2 piece length %v accepted in %q", pl, b)
		}
		var sum int64
		for _, file := range m.Files {
			if file.Length < 0 {
				t.Fatalf("negative file length in %q", b)
			}
			sum += file.Length
		}
		if m.TotalSize == nil || m.FileCount == nil || sum != *m.TotalSize || int(*m.FileCount) != len(m.Files) {
			t.Fatalf("inconsistent sizes for %q", b)
		}
	})
}

// validPathUTF8 reports whether f's "path.utf-8", when a list, is what
// libtorrent takes: strings only, at least one unless f is a pad file.
func validPathUTF8(f *rawFile) bool {
	v, err := decodeValue(f.PathU)
	l, ok := v.([]any)
	if f.PathU == nil || err != nil || !ok {
		return true
	}
	for _, e := range l {
		if _, ok := e.(string); !ok {
			return false
		}
	}
	return len(l) > 0 || isPad(f.Attr)
}

// isString reports whether a decoded bencode value is a string.
func isString(v any) bool { _, ok := v.(string); return ok }

// checkPathsAccepted fails t when an accepted dictionary b's "files"
// (raw) hold a file that is no pad and has neither a "path.utf-8" list
// nor a "path" list holding strings, one at least, or when its listed
// files m do not keep, in order, the "path" of each such file holding
// one, else its "path.utf-8" (a hybrid of an empty "files" lists its
// tree instead: checkTreeAccepted).
func checkPathsAccepted(t *testing.T, raw *rawInfo, m *schema.Meta, b []byte) {
	t.Helper()
	var want []string
	for i := range raw.Files {
		f := &raw.Files[i]
		if isPad(f.Attr) {
			continue
		}
		p, _ := decodeValue(f.Path)
		u, _ := decodeValue(f.PathU)
		pl, ul := stringsOf(p), stringsOf(u)
		_, uList := u.([]any)
		switch {
		case !uList && len(pl) == 0:
			t.Fatalf("file %d without a path accepted in %q", i, b)
		case len(pl) > 0:
			want = append(want, strings.Join(pl, "/"))
		default:
			want = append(want, strings.Join(ul, "/"))
		}
	}
	if len(raw.Files) == 0 {
		return
	}
	if len(m.Files) != len(want) {
		t.Fatalf("%d files listed, %d wanted, in %q", len(m.Files), len(want), b)
	}
	for i, p := range want {
		if string(m.Files[i].PathRaw) != p {
			t.Fatalf("file %d listed as %q, not %q, in %q", i, m.Files[i].PathRaw, p, b)
		}
	}
}

// stringsOf is a decoded bencode value when it is a list of strings,
// else nil.
func stringsOf(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, e := range l {
		s, ok := e.(string)
		if !ok {
			return nil
		}
		out = append(out, s)
	}
	return out
}

// checkTreeAccepted fails t when an accepted
// dictionary b's file tree holds a pad file, or when b is a hybrid (raw
// holds meta version 2 and files or a length) whose files are not its
// file tree's: its listed files m for a length or an empty "files" (then
// the tree's are listed); for files, its "files"
// holding bytes (less BEP 47 pads and BitComet-named pads, hybrid.go;
// empty files are only counted, and their number is not checked here)
// must be, in order, the tree's files holding bytes, same paths and
// lengths, and no more "files" entries than the tree's files and a pad
// after each.
func checkTreeAccepted(t *testing.T, tree []byte, raw *rawInfo, m *schema.Meta, b []byte) {
	t.Helper()
	files, err := treeFiles(tree)
	if err != nil {
		t.Fatalf("file tree refused once accepted in %q: %v", b, err)
	}
	if v, err := decodeValue(tree); err != nil || hasTreePad(v) {
		t.Fatalf("pad file in a file tree accepted in %q", b)
	}
	switch {
	case raw.Files != nil && len(raw.Files) == 0: // no views compared: the file tree's files listed
		if len(m.Files) != len(files) {
			t.Fatalf("hybrid of no files listing %d, its tree %d, in %q", len(m.Files), len(files), b)
		}
		for i, f := range files {
			if m.Files[i].Length != f.length || string(m.Files[i].PathRaw) != strings.Join(f.path, "/") {
				t.Fatalf("hybrid of no files: file %d listed as %q of %d bytes, not its tree's, in %q",
					i, m.Files[i].PathRaw, m.Files[i].Length, b)
			}
		}
	case raw.Files != nil:
		if len(raw.Files) > 2*len(files) {
			t.Fatalf("hybrid of %d files in its tree, %d in files, accepted in %q", len(files), len(raw.Files), b)
		}
		var full []treeFile // the tree's files holding bytes
		for _, f := range files {
			if f.length > 0 {
				full = append(full, f)
			}
		}
		next := 0
		for i := range raw.Files {
			f := &raw.Files[i]
			n := fileSize(f)
			switch {
			case isPad(f.Attr) || n == 0:
			case next < len(full) && n == full[next].length && samePath(f, full[next].path):
				next++
			case !bitCometPad(f):
				t.Fatalf("hybrid file %d (%d bytes) not in its tree accepted in %q", i, n, b)
			}
		}
		if next != len(full) {
			t.Fatalf("hybrid of %d files holding bytes in its tree, %d of them in files, accepted in %q", len(full), next, b)
		}
	case raw.Length != nil:
		if len(files) != 1 || len(m.Files) != 1 || files[0].length != m.Files[0].Length {
			t.Fatalf("single-file hybrid of %d files in its tree accepted in %q", len(files), b)
		}
	}
}

// hasTreePad reports whether a decoded file tree node holds, at any
// depth below its root, a file whose attr string holds "p".
func hasTreePad(node any) bool {
	dir, _ := node.(map[string]any)
	for k, v := range dir {
		if attrs, ok := v.(map[string]any); ok && k == "" {
			if s, ok := attrs["attr"].(string); ok && strings.Contains(s, "p") {
				return true
			}
			continue
		}
		if hasTreePad(v) {
			return true
		}
	}
	return false
}
