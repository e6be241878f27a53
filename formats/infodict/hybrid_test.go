package infodict

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestHybrid: a hybrid dictionary's v1 files (its pad files aside) are its
// file tree's, in the same order, with the same paths and lengths, each
// file of any bytes starting on the piece where BEP 52 puts it (pad files
// fill the gaps); else Parse refuses it naming the difference, and
// ParseAs alike under either hash (libtorrent: torrent_inconsistent_files).
func TestHybrid(t *testing.T) {
	root := "11:pieces root32:" + root32
	file := func(length, path string) string { return "d6:lengthi" + length + "e4:pathl" + path + "ee" }
	pad := func(length string) string { return "d4:attr1:p6:lengthi" + length + "e4:pathl4:.pad1:0ee" }
	tf := func(key, length string) string { // a file tree entry (keys in order)
		if length == "0" {
			return key + "d0:d6:lengthi0eee"
		}
		return key + "d0:d6:lengthi" + length + "e" + root + "ee"
	}
	hybrid := func(tree string, files ...string) string {
		return "d9:file treed" + tree + "e5:filesl" + strings.Join(files, "") +
			"e12:meta versioni2e4:name1:d12:piece lengthi16384ee"
	}
	single := func(tree, length, names string) string {
		return "d9:file treed" + tree + "e6:lengthi" + length + "e12:meta versioni2e" + names + "12:piece lengthi16384ee"
	}
	a, b := tf("1:a", "1"), tf("1:b", "5")
	// BitComet's pads: no attr "p", a name holding "_____padding_file_".
	const bc = "_____padding_file_0_if you see this file, please update to BitComet 0.85 or above____"
	bstr := func(s string) string { return strconv.Itoa(len(s)) + ":" + s }
	bcPad := func(length, dirs string) string { return file(length, dirs+bstr(bc)) }
	for _, tt := range []struct {
		name string
		info string
		want string // "" for accepted, else what the error names
	}{
		{"aligned by a pad", hybrid(a+b, file("1", "1:a"), pad("16383"), file("5", "1:b")), ""},
		{"path.utf-8 alone names the tree's file", hybrid(a+b, "d6:lengthi1e10:path.utf-8l1:aee", pad("16383"), file("5", "1:b")), ""},
		{"path holding a number, path.utf-8 the tree's file", hybrid(a+b, "d6:lengthi1e4:pathli1ee10:path.utf-8l1:aee",
			pad("16383"), file("5", "1:b")), ""},
		{"path.utf-8 alone names another file", hybrid(a+b, "d6:lengthi1e10:path.utf-8l1:xee", pad("16383"), file("5", "1:b")),
			`file 0 is "x", but the file tree has "a" there`},
		{"a file of a whole piece, no pad", hybrid(tf("1:a", "16384")+b, file("16384", "1:a"), file("5", "1:b")), ""},
		{"empty file before the pad", hybrid(a+tf("1:b", "0")+tf("1:c", "5"),
			file("1", "1:a"), file("0", "1:b"), pad("16383"), file("5", "1:c")), ""},
		{"empty file after the pad", hybrid(a+tf("1:b", "0")+tf("1:c", "5"),
			file("1", "1:a"), pad("16383"), file("0", "1:b"), file("5", "1:c")), ""},
		{"tail pad to the piece's end", hybrid(a, file("1", "1:a"), pad("16383")), ""},
		{"two pads where the tree has an empty file", hybrid(a+tf("2:ae", "0")+b, file("1", "1:a"), pad("16000"), pad("383"), file("5", "1:b")), ""},
		{"empty file of another name", hybrid(a+tf("2:ae", "0")+b, file("1", "1:a"), pad("16383"), file("0", "1:x"), file("5", "1:b")), ""},
		{"empty files swapped", hybrid(a+tf("2:ae", "0")+tf("2:af", "0")+b,
			file("1", "1:a"), file("0", "2:af"), pad("16383"), file("0", "2:ae"), file("5", "1:b")), ""},
		{"a symlink where the tree has an empty file of another name", hybrid(a+tf("1:e", "0"),
			file("1", "1:a"), "d4:attr1:l4:pathl1:le12:symlink pathl1:aee"), ""},
		{"tail pad before a last empty file", hybrid(a+tf("1:z", "0"), file("1", "1:a"), pad("16383"), file("0", "1:z")), ""},
		{"tail pad after a last empty file", hybrid(a+tf("1:z", "0"), file("1", "1:a"), file("0", "1:z"), pad("16383")), ""},
		{"no tail pad, a last empty file", hybrid(a+tf("1:z", "0"), file("1", "1:a"), file("0", "1:z")), ""},
		{"nested directories", hybrid("3:dird"+a+b+"e", file("1", "3:dir1:a"), pad("16383"), file("5", "3:dir1:b")), ""},
		{"path.utf-8 names the tree's file", hybrid(a, "d6:lengthi1e4:pathl1:xe10:path.utf-8l1:aee"), ""},
		{"path.utf-8 no list: path compared", hybrid(a, "d6:lengthi1e4:pathl1:ae10:path.utf-81:xe"), ""},
		{"empty files list", hybrid(a), ""},
		{"empty files list, an empty file tree", hybrid(""), ""},
		{"single file", single(tf("1:d", "5"), "5", "4:name1:d"), ""},
		{"single file named by name.utf-8", single(tf("1:d", "5"), "5", "4:name1:\xff10:name.utf-81:d"), ""},

		{"aligned by a BitComet pad", hybrid(a+b, file("1", "1:a"), bcPad("16383", ""), file("5", "1:b")), ""},
		{"BitComet pad in a directory", hybrid(a+b, file("1", "1:a"), bcPad("16383", "3:dir"), file("5", "1:b")), ""},
		{"BitComet pad named in path.utf-8", hybrid(a+b, file("1", "1:a"),
			"d6:lengthi16383e4:pathl1:xe10:path.utf-8l"+bstr(bc)+"ee", file("5", "1:b")), ""},
		{"BitComet mark inside the name", hybrid(a+b, file("1", "1:a"), file("16383", bstr("x"+bc)), file("5", "1:b")), ""},
		{"BitComet tail pad", hybrid(a, file("1", "1:a"), bcPad("16383", "")), ""},
		{"a file tree file named as a BitComet pad", hybrid(tf(bstr(bc), "5")+a, bcPad("5", ""), pad("16379"), file("1", "1:a")), ""},

		// BEP 47 attributes and mtimes are not compared (libtorrent ignores them)
		{"executable in files only", hybrid(a, "d4:attr1:x6:lengthi1e4:pathl1:aee"), ""},
		{"hidden in the tree only", hybrid("1:ad0:d4:attr1:h6:lengthi1e"+root+"ee", file("1", "1:a")), ""},
		{"other mtimes", hybrid("1:ad0:d6:lengthi1e5:mtimei2e"+root+"ee", "d6:lengthi1e5:mtimei1e4:pathl1:aee"), ""},
		{"other symlink targets", hybrid(a+"1:ld0:d4:attr1:l6:lengthi0e12:symlink pathl1:beee",
			file("1", "1:a"), "d4:attr1:l4:pathl1:le12:symlink pathl1:aee"), ""},
		{"a symlink without length in both views", hybrid(a+"1:ld0:d4:attr1:l12:symlink pathl1:aeee",
			file("1", "1:a"), "d4:attr1:l4:pathl1:le12:symlink pathl1:aee"), ""},
		{"a symlink of 5 bytes in files, none in the tree", hybrid(a+"1:ld0:d4:attr1:l12:symlink pathl1:aeee",
			file("1", "1:a"), "d4:attr1:l6:lengthi5e4:pathl1:le12:symlink pathl1:aee"), ""},
		{"a symlink in files, an empty file in the tree", hybrid(a+tf("1:l", "0"),
			file("1", "1:a"), "d4:attr1:l4:pathl1:le12:symlink pathl1:aee"), ""},

		// one pad file a gap (libtorrent's files_compatible compares the views entry by entry)
		{"pad split in two", hybrid(a+b, file("1", "1:a"), pad("16000"), pad("383"), file("5", "1:b")),
			`file 2 is a pad file of 383 bytes, but the file tree's piece layout has "b" of 5 bytes there`},
		{"pad split in two, a tail pad", hybrid(a+b, file("1", "1:a"), pad("16000"), pad("383"), file("5", "1:b"), pad("16379")),
			`file 2 is a pad file of 383 bytes, but the file tree's piece layout has "b"`},
		{"BitComet and BEP 47 pads in one gap", hybrid(a+b, file("1", "1:a"), bcPad("16000", ""), pad("383"), file("5", "1:b")),
			`file 2 is a pad file of 383 bytes`},
		{"tail pad split in two", hybrid(a, file("1", "1:a"), pad("16000"), pad("383")), "file 2 is a pad file of 383 bytes, past the file tree's piece layout's end"},
		{"a pad of 0 bytes between whole pieces", hybrid(tf("1:a", "16384")+b, file("16384", "1:a"), pad("0"), file("5", "1:b")),
			`file 1 is a pad file of 0 bytes, but the file tree's piece layout has "b" of 5 bytes there`},
		{"an empty file where the tree's tail pad is", hybrid(a, file("1", "1:a"), file("0", "1:z")), "files hold 1 bytes, pad files included, 16384 in"},
		// empty files are counted, not named (files_compatible)
		{"empty file in files only", hybrid(a+b, file("1", "1:a"), pad("16383"), file("0", "1:e"), file("5", "1:b")),
			`file 2 is the empty file "e", but the file tree's piece layout has "b" of 5 bytes there`},
		{"empty file in the tree only", hybrid(a+tf("2:ae", "0")+b, file("1", "1:a"), pad("16383"), file("5", "1:b")),
			`file 2 is "b" of 5 bytes, but the file tree's piece layout has the empty file "ae" there`},
		{"no pad", hybrid(a+b, file("1", "1:a"), file("5", "1:b")), `file 1 is "b" of 5 bytes, but the file tree's piece layout has a pad file of 16383 bytes there`},
		{"BitComet pad too short", hybrid(a+b, file("1", "1:a"), bcPad("100", ""), file("5", "1:b")), "starts at byte 101, but at 16384"},
		{"BitComet tail pad past the piece", hybrid(a, file("1", "1:a"), bcPad("16384", "")), "files hold 16385 bytes, pad files included, 16384 in"},
		{"BitComet mark in a directory only", hybrid(a+b, file("1", "1:a"), file("16383", bstr(bc)+"1:x"), file("5", "1:b")),
			`file 1 is "` + bc + `/x" of 16383 bytes, but the file tree's piece layout has a pad file of 16383 bytes there`},
		{"another padding name", hybrid(a+b, file("1", "1:a"), file("16383", bstr("____padding_file")), file("5", "1:b")),
			`file 1 is "____padding_file" of 16383 bytes, but the file tree's piece layout has a pad file`},
		{"pad too short", hybrid(a+b, file("1", "1:a"), pad("100"), file("5", "1:b")), "starts at byte 101, but at 16384"},
		{"pad too long", hybrid(a+b, file("1", "1:a"), pad("32767"), file("5", "1:b")), "starts at byte 32768, but at 16384"},
		{"pad before the first file", hybrid(a, pad("16384"), file("1", "1:a")), `file 0 is a pad file of 16384 bytes, but the file tree's piece layout has "a" of 1 bytes`},
		{"tail pad past the piece", hybrid(a, file("1", "1:a"), pad("16384")), "files hold 16385 bytes, pad files included, 16384 in"},
		{"other length", hybrid(a, file("2", "1:a")), `file 0 "a" has 2 bytes, 1 in the file tree`},
		{"other path", hybrid(a, file("1", "1:x")), `file 0 is "x", but the file tree has "a" there`},
		{"path names the tree's file, path.utf-8 another", hybrid(a, "d6:lengthi1e4:pathl1:ae10:path.utf-8l1:xee"),
			`file 0 is "x", but the file tree has "a" there`},
		{"an empty path.utf-8", hybrid(a, "d6:lengthi1e4:pathl1:ae10:path.utf-8lee"), "file 0 has an empty path.utf-8"},
		{"BitComet mark in path only, path.utf-8 another", hybrid(a+b, file("1", "1:a"),
			"d6:lengthi16383e4:pathl"+bstr(bc)+"e10:path.utf-8l1:xee", file("5", "1:b")), `file 1 is "x" of 16383 bytes, but the file tree's piece layout has a pad file`},
		{"single file named by name, name.utf-8 another", single(tf("1:d", "5"), "5", "4:name1:d10:name.utf-81:x"),
			`the single file is "d" in the file tree, not named as the torrent`},
		{"other directory", hybrid("3:dird"+a+"e", file("1", "3:dix1:a")), `file 0 is "dix/a", but the file tree has "dir/a" there`},
		{"other order", hybrid(a+b, file("5", "1:b"), pad("16379"), file("1", "1:a")), `file 0 is "b", but the file tree has "a" there`},
		{"file not in the tree", hybrid(a, file("1", "1:a"), pad("16383"), file("5", "1:b")), `file 2 "b" is not in the file tree`},
		{"tree file not in files", hybrid(a+b, file("1", "1:a")), `file tree file "b" is not in files`},
		{"single file of another name", single(tf("1:x", "5"), "5", "4:name1:d"), `the single file is "x" in the file tree, not named as the torrent`},
		{"single file of another length", single(tf("1:d", "6"), "5", "4:name1:d"), "the single file has 5 bytes, 6 in the file tree"},
		{"single file, a tree of two", single(tf("1:d", "5")+tf("1:e", "5"), "5", "4:name1:d"), "the file tree holds 2 files"},
		{"no meta version", strings.Replace(hybrid(a, file("1", "1:a")), "12:meta versioni2e", "", 1), "a file tree without meta version 2"},
		{"single file, in a directory", single("1:dd"+tf("1:d", "5")+"e", "5", "4:name1:d"), `the single file is "d/d" in the file tree`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse([]byte(tt.info))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Parse: %v, want it accepted", err)
				}
				if _, err := ParseAs([]byte(tt.info), schema.HashV1); err != nil {
					t.Errorf("ParseAs(v1): %v", err)
				}
				_, err := ParseAs([]byte(tt.info), schema.HashV2)
				if v2 := strings.Contains(tt.info, "12:meta versioni2e"); (err == nil) != v2 {
					t.Errorf("ParseAs(v2): %v; want it taken: %v (a hybrid only with meta version 2)", err, v2)
				}
				if m.FileCount == nil || int(*m.FileCount) != len(m.Files) {
					t.Fatalf("file_count %v for %d files", m.FileCount, len(m.Files))
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse: %v; want ErrInvalid naming %q", err, tt.want)
			}
			for _, typ := range []int8{schema.HashV1, schema.HashV2} {
				if _, err := ParseAs([]byte(tt.info), typ); !errors.Is(err, ErrInvalid) || errors.Is(err, ErrVersion) {
					t.Errorf("ParseAs(%d): %v; want Parse's error", typ, err)
				}
			}
		})
	}
}

// TestHybridBitCometColumns: a hybrid padded BitComet's way stores the
// columns its v1 view alone would (Parse lists a BitComet pad as a file,
// as in any v1 dictionary: it leaves out BEP 47 pads only).
func TestHybridBitCometColumns(t *testing.T) {
	const bc = "_____padding_file_0_if you see this file, please update to BitComet 0.85 or above____"
	files := "5:filesld6:lengthi1e4:pathl1:aeed6:lengthi16383e4:pathl" + strconv.Itoa(len(bc)) + ":" + bc +
		"eed6:lengthi5e4:pathl1:beee"
	tree := "9:file treed1:ad0:d6:lengthi1e11:pieces root32:" + root32 + "ee1:bd0:d6:lengthi5e11:pieces root32:" + root32 + "eee"
	v1 := "d" + files + "4:name1:d12:piece lengthi16384ee"
	hybrid := "d" + tree + files + "12:meta versioni2e4:name1:d12:piece lengthi16384ee"
	want, err := Parse([]byte(v1))
	if err != nil {
		t.Fatalf("v1: %v", err)
	}
	got, err := Parse([]byte(hybrid))
	if err != nil {
		t.Fatalf("hybrid: %v", err)
	}
	if *got.FileCount != 3 || *got.TotalSize != 16389 || !reflect.DeepEqual(got.Files, want.Files) ||
		*got.FileCount != *want.FileCount || *got.TotalSize != *want.TotalSize {
		t.Errorf("hybrid: %d files, %d bytes, %v; want the v1 view's %d, %d, %v",
			*got.FileCount, *got.TotalSize, got.Files, *want.FileCount, *want.TotalSize, want.Files)
	}
}

// TestHybridEmptyFiles: a hybrid whose "files" is an empty list is taken
// whatever its file tree holds (libtorrent compares the views only when
// the v1 one has files) and lists its file tree's files, as the v2
// dictionary it also is would, under Parse, ParseWithPads and ParseAs of
// either hash; an empty file tree too lists no file, as before.
func TestHybridEmptyFiles(t *testing.T) {
	tree := "9:file treed3:dird1:ad0:d6:lengthi5e11:pieces root32:" + root32 + "eee1:bd0:d6:lengthi0eeee"
	tail := "12:meta versioni2e4:name1:d12:piece lengthi16384ee"
	for _, tt := range []struct {
		name, info string
		files      []schema.File
		size       int64
	}{
		{"two files", "d" + tree + "5:filesle" + tail,
			[]schema.File{{Path: "b", PathRaw: []byte("b")}, {Path: "dir/a", PathRaw: []byte("dir/a"), Length: 5}}, 5},
		{"empty file tree", "d9:file treede5:filesle" + tail, []schema.File{}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v2 := strings.Replace(tt.info, "5:filesle", "", 1)
			want, err := Parse([]byte(v2))
			if err != nil {
				t.Fatalf("v2: %v", err)
			}
			parses := map[string]func([]byte) (schema.Meta, error){
				"Parse": Parse, "ParseWithPads": ParseWithPads,
				"ParseAs(v1)": func(b []byte) (schema.Meta, error) { return ParseAs(b, schema.HashV1) },
				"ParseAs(v2)": func(b []byte) (schema.Meta, error) { return ParseAs(b, schema.HashV2) },
			}
			for name, parse := range parses {
				m, err := parse([]byte(tt.info))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if len(m.Files) != len(tt.files) || (len(tt.files) > 0 && !reflect.DeepEqual(m.Files, tt.files)) ||
					*m.TotalSize != tt.size || int(*m.FileCount) != len(tt.files) {
					t.Errorf("%s: files %v, total_size %d, file_count %d; want %v, %d", name, m.Files, *m.TotalSize, *m.FileCount, tt.files, tt.size)
				}
				if len(tt.files) > 0 && !reflect.DeepEqual(m.Files, want.Files) {
					t.Errorf("%s: files %v; the v2 dictionary's %v", name, m.Files, want.Files)
				}
			}
		})
	}
}
