package infodict

import (
	"errors"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestParseStrict: what BEP 3 or 52 make an invalid info dictionary, and
// libtorrent refuses, Parse refuses naming the problem; what it keeps
// accepting (strict.go says why) it takes.
func TestParseStrict(t *testing.T) {
	const tail = "4:name1:d12:piece lengthi16384ee"
	files := func(entries string) string { return "d5:filesl" + entries + "e" + tail }
	v2 := func(file, plen string) string {
		return "d9:file treed1:a" + file + "e12:meta versioni2e4:name1:x12:piece lengthi" + plen + "ee"
	}
	leaf := func(attrs string) string { return "d0:d" + attrs + "ee" }
	root := "11:pieces root32:" + root32
	for _, tt := range []struct {
		name string
		info string
		want string // "" for accepted, else what the error names
	}{
		// v1 "files" entries (BEP 3)
		{"file without length", files("d4:pathl1:aee"), "file 0 has no length"},
		{"second file without length", files("d6:lengthi1e4:pathl1:aeed4:pathl1:bee"), "file 1 has no length"},
		{"symlink without length", files("d4:attr1:l4:pathl1:aee"), ""},
		{"file without path", files("d6:lengthi1ee"), "file 0 has no path"},
		{"file with an empty path", files("d6:lengthi1e4:pathlee"), "file 0 has no path"},
		{"pad file without path", files("d6:lengthi1e4:pathl1:aeed4:attr1:p6:lengthi5ee"), ""},
		{"path element a number", files("d6:lengthi1e4:pathli1eee"), "file 0 has a path holding an element that is not a string"},
		{"path a string", files("d6:lengthi1e4:path1:ae"), "file 0 has no path"},
		{"pad file whose path is a string", files("d4:attr1:p6:lengthi1e4:path1:ae"), ""},
		{"empty path element", files("d6:lengthi1e4:pathl1:a0:ee"), ""},
		{"dot-dot path element", files("d6:lengthi1e4:pathl2:..6:passwdee"), ""},
		{"path element holding a slash", files("d6:lengthi1e4:pathl3:a/bee"), ""},
		// path.utf-8, read instead of path when a list (libtorrent's extract_single_file)
		{"empty path.utf-8", files("d6:lengthi1e4:pathl1:ae10:path.utf-8lee"), "file 0 has an empty path.utf-8"},
		{"second file's empty path.utf-8", files("d6:lengthi1e4:pathl1:aeed6:lengthi1e4:pathl1:be10:path.utf-8lee"),
			"file 1 has an empty path.utf-8"},
		{"path.utf-8 holding a number", files("d6:lengthi1e4:pathl1:ae10:path.utf-8l1:ai1eee"),
			"file 0 has a path.utf-8 holding an element that is not a string"},
		{"path.utf-8 holding a list", files("d6:lengthi1e4:pathl1:ae10:path.utf-8ll1:aeee"), "not a string"},
		{"pad file with an empty path.utf-8", files("d4:attr1:p6:lengthi5e4:pathl1:pe10:path.utf-8lee"), ""},
		{"pad file with path.utf-8 holding a number", files("d4:attr1:p6:lengthi5e10:path.utf-8li1eee"), "not a string"},
		{"path.utf-8 a string: path read", files("d6:lengthi1e4:pathl1:ae10:path.utf-81:xe"), ""},
		{"path.utf-8 a dictionary: path read", files("d6:lengthi1e4:pathl1:ae10:path.utf-8d1:ai1eee"), ""},
		{"path.utf-8 of strings", files("d6:lengthi1e4:pathl1:ae10:path.utf-8l1:x1:yee"), ""},
		// a path.utf-8 list is read alone: path may then be anything
		{"path.utf-8 without path", files("d6:lengthi1e10:path.utf-8l1:xee"), ""},
		{"path.utf-8 beside an empty path", files("d6:lengthi1e4:pathle10:path.utf-8l1:xee"), ""},
		{"path.utf-8 beside a path holding a number", files("d6:lengthi1e4:pathli1ee10:path.utf-8l1:xee"), ""},
		{"path.utf-8 beside a path holding a list", files("d6:lengthi1e4:pathll1:aee10:path.utf-8l1:xee"), ""},
		{"path.utf-8 beside a path that is a string", files("d6:lengthi1e4:path1:a10:path.utf-8l1:xee"), ""},
		{"pad file, path.utf-8 beside a path holding a number", files("d4:attr1:p6:lengthi1e4:pathli1ee10:path.utf-8l1:xee"), ""},
		{"empty path.utf-8 without path", files("d6:lengthi1e10:path.utf-8lee"), "file 0 has an empty path.utf-8"},
		{"path.utf-8 holding a number, no path", files("d6:lengthi1e10:path.utf-8li1eee"), "path.utf-8 holding an element"},
		{"path.utf-8 a string, path holding a number", files("d6:lengthi1e4:pathli1ee10:path.utf-81:xe"),
			"file 0 has a path holding an element that is not a string"},
		{"path.utf-8 a string, no path", files("d6:lengthi1e10:path.utf-81:xe"), "file 0 has no path"},
		// the dictionary's own keys
		{"single file, empty name.utf-8", "d6:lengthi1e4:name1:a10:name.utf-80:12:piece lengthi16384ee",
			"a single file named by an empty name.utf-8"},
		{"single file, empty name.utf-8 alone", "d6:lengthi1e10:name.utf-80:12:piece lengthi16384ee", "empty name.utf-8"},
		{"hybrid single file, empty name.utf-8", "d9:file treed1:ad0:d6:lengthi1e" + root + "eee6:lengthi1e12:meta versioni2e" +
			"4:name1:a10:name.utf-80:12:piece lengthi16384ee", "empty name.utf-8"},
		{"files, empty name.utf-8", "d5:filesld6:lengthi1e4:pathl1:aeee4:name1:d10:name.utf-80:12:piece lengthi16384ee", ""},
		{"v2, empty name.utf-8", "d9:file treed1:ad0:d6:lengthi1e" + root + "eee12:meta versioni2e" +
			"4:name1:a10:name.utf-80:12:piece lengthi16384ee", ""},
		{"no name", "d6:lengthi1e12:piece lengthi16384ee", "no name"},
		// name.utf-8, then name, each read only when a string (libtorrent's dict_find_string)
		{"name.utf-8 a number, name read", "d6:lengthi1e4:name1:a10:name.utf-8i1e12:piece lengthi16384ee", ""},
		{"name.utf-8 a list, files", "d5:filesld6:lengthi1e4:pathl1:aeee4:name1:d10:name.utf-8l1:xe12:piece lengthi16384ee", ""},
		{"name a number, name.utf-8 read", "d6:lengthi1e4:namei1e10:name.utf-81:a12:piece lengthi16384ee", ""},
		{"name a dictionary, name.utf-8 read, v2", "d9:file treed1:ad0:d6:lengthi1e" + root + "eee12:meta versioni2e" +
			"4:named1:ai1ee10:name.utf-81:a12:piece lengthi16384ee", ""},
		{"name a number, no name.utf-8", "d6:lengthi1e4:namei1e12:piece lengthi16384ee", "no name"},
		{"name and name.utf-8 no strings", "d6:lengthi1e4:namei1e10:name.utf-8li1ee12:piece lengthi16384ee", "no name"},
		{"name.utf-8 a number, single file, empty name", "d6:lengthi1e4:name0:10:name.utf-8i1e12:piece lengthi16384ee", ""},
		{"hybrid single file named by name, name.utf-8 a number", "d9:file treed1:ad0:d6:lengthi1e" + root + "eee6:lengthi1e" +
			"12:meta versioni2e4:name1:a10:name.utf-8i1e12:piece lengthi16384ee", ""},
		{"hybrid single file named by name.utf-8, name a number", "d9:file treed1:ad0:d6:lengthi1e" + root + "eee6:lengthi1e" +
			"12:meta versioni2e4:namei1e10:name.utf-81:a12:piece lengthi16384ee", ""},
		{"hybrid single file, name another, name.utf-8 a number", "d9:file treed1:ad0:d6:lengthi1e" + root + "eee6:lengthi1e" +
			"12:meta versioni2e4:name1:b10:name.utf-8i1e12:piece lengthi16384ee", "not named as the torrent"},
		{"empty name", "d6:lengthi1e4:name0:12:piece lengthi16384ee", ""},
		{"pieces of 19 bytes", "d6:lengthi1e4:name1:x12:piece lengthi16384e6:pieces19:" + strings.Repeat("p", 19) + "e",
			"pieces has 19 bytes, not a multiple of 20"},
		{"pieces of 40 bytes", "d6:lengthi1e4:name1:x12:piece lengthi16384e6:pieces40:" + strings.Repeat("p", 40) + "e", ""},
		{"pieces not a string", "d6:lengthi1e4:name1:x12:piece lengthi16384e6:piecesi20ee", "pieces \"i20e\" is not a string"},
		{"piece length 0 with bytes", "d6:lengthi1e4:name1:x12:piece lengthi0ee", "piece length 0 for 1 bytes"},
		{"piece length 0, no bytes", "d6:lengthi0e4:name1:x12:piece lengthi0ee", ""},
		{"v1 piece length no power of two", "d6:lengthi1e4:name1:x12:piece lengthi1000ee", ""},
		// v2 (BEP 52)
		{"v2", v2(leaf("6:lengthi1e"+root), "16384"), ""},
		{"v2 piece length 8 KiB", v2(leaf("6:lengthi1e"+root), "8192"), "piece length 8192 in a v2 dictionary"},
		{"v2 piece length no power of two", v2(leaf("6:lengthi1e"+root), "49152"), "piece length 49152 in a v2 dictionary"},
		{"v2 without piece length", "d9:file treed1:a" + leaf("6:lengthi1e"+root) + "e12:meta versioni2e4:name1:xe",
			"meta version 2 without a piece length"},
		{"pieces root of 31 bytes", v2(leaf("6:lengthi1e11:pieces root31:"+root32[1:]), "16384"), `file "a" has a pieces root that is not 32 bytes`},
		{"pieces root of 33 bytes", v2(leaf("6:lengthi1e11:pieces root33:"+root32+"r"), "16384"), "not 32 bytes"},
		{"pieces root a number", v2(leaf("6:lengthi1e11:pieces rooti1e"), "16384"), "not 32 bytes"},
		{"no pieces root", v2(leaf("6:lengthi1e"), "16384"), `file "a" of 1 bytes has no pieces root`},
		{"empty file without pieces root", v2(leaf("6:lengthi0e"), "16384"), ""},
		{"symlink without pieces root", v2(leaf("4:attr1:l6:lengthi1e"), "16384"), ""},
		// libtorrent 2.0.x reads the pieces root of a file of any bytes only
		{"empty file, pieces root of 31 bytes", v2(leaf("6:lengthi0e11:pieces root31:"+root32[1:]), "16384"), ""},
		{"empty file, pieces root a number", v2(leaf("6:lengthi0e11:pieces rooti1e"), "16384"), ""},
		{"empty file, pieces root a list", v2(leaf("6:lengthi0e11:pieces rootl32:"+root32+"e"), "16384"), ""},
		{"symlink, pieces root of 33 bytes", v2(leaf("4:attr1:l6:lengthi1e11:pieces root33:"+root32+"r"), "16384"), ""},
		{"symlink without symlink path, pieces root a number", v2(leaf("4:attr1:l11:pieces rooti1e"), "16384"), ""},
		{"hybrid, empty file with a pieces root of 31 bytes", "d9:file treed1:a" + leaf("6:lengthi1e"+root) + "1:e" +
			leaf("6:lengthi0e11:pieces root31:"+root32[1:]) + "e5:filesld6:lengthi1e4:pathl1:aeed4:attr1:p6:lengthi16383e" +
			"4:pathl4:.pad5:16383eed6:lengthi0e4:pathl1:eeee12:meta versioni2e4:name1:d12:piece lengthi16384ee", ""},
		{"v2 file without length", v2(leaf(root), "16384"), `file tree file "a" has no valid length`},
		{"v2 file of a negative length", v2(leaf("6:lengthi-1e"+root), "16384"), "has no valid length"},
		{"v2 symlink without length", v2(leaf("4:attr1:l12:symlink pathl1:be"), "16384"), ""},
		{"v2 symlink of a negative length", v2(leaf("4:attr1:l6:lengthi-1e"), "16384"), ""},
		{"v2 symlink whose length is a string", v2(leaf("4:attr2:xl6:length1:5"), "16384"), ""},
		{"zero pieces root", v2(leaf("6:lengthi1e11:pieces root32:"+string(make([]byte, 32))), "16384"), ""},
		{"hybrid with a pieces root of 31 bytes", "d9:file treed1:a" + leaf("6:lengthi1e11:pieces root31:"+root32[1:]) +
			"e6:lengthi1e12:meta versioni2e4:name1:a12:piece lengthi16384ee", "not 32 bytes"},
		{"hybrid with a file tree that is a list", "d9:file treeli1ee6:lengthi1e12:meta versioni2e4:name1:a12:piece lengthi16384ee",
			`meta version 2 with a file tree "li1ee" that is not a dictionary`},
		{"a long path, clipped", v2("d70000:"+strings.Repeat("x", 70000)+leaf("6:lengthi-1e")+"e", "16384"),
			`file "a/` + strings.Repeat("x", maxErrPath-2) + `..." has no valid length`},
		// meta version (BEP 52: an integer, checked first; above 2 unknown)
		{"meta version 3 with a length", "d6:lengthi1e12:meta versioni3e4:name1:x12:piece lengthi16384ee",
			"meta version 3, newer than BEP 52's 2"},
		{"meta version 3 with a file tree", "d9:file treed1:a" + leaf("6:lengthi1e"+root) + "e12:meta versioni3e4:name1:x12:piece lengthi16384ee",
			"meta version 3, newer"},
		{"meta version 3 before other errors", "d12:meta versioni3ee", "meta version 3, newer"},
		{"meta version a string", "d6:lengthi1e12:meta version1:24:name1:x12:piece lengthi16384ee",
			`meta version "1:2" is not an integer`},
		{"meta version a list", "d6:lengthi1e12:meta versionli2ee4:name1:x12:piece lengthi16384ee", "is not an integer"},
		{"meta version 1", "d6:lengthi1e12:meta versioni1e4:name1:x12:piece lengthi16384ee", ""},
		{"meta version -1", "d6:lengthi1e12:meta versioni-1e4:name1:x12:piece lengthi16384ee", ""},
		// meta version 2 and a file tree come together (BEP 52; libtorrent:
		// torrent_missing_file_tree, torrent_missing_meta_version)
		{"meta version 2 without a file tree, a length", "d6:lengthi1e12:meta versioni2e4:name1:x12:piece lengthi16384ee",
			"meta version 2 without a file tree"},
		{"meta version 2 without a file tree, files", "d5:filesld6:lengthi1e4:pathl1:aeee12:meta versioni2e" + tail,
			"meta version 2 without a file tree"},
		{"meta version 2, a file tree that is a string", "d9:file tree1:x6:lengthi1e12:meta versioni2e4:name1:x12:piece lengthi16384ee",
			`file tree "1:x" that is not a dictionary`},
		{"file tree without meta version, a length", "d9:file treed1:x" + leaf("6:lengthi1e"+root) + "e6:lengthi1e4:name1:x12:piece lengthi16384ee",
			"a file tree without meta version 2"},
		{"file tree without meta version, no length", "d9:file treed1:x" + leaf("6:lengthi1e"+root) + "e4:name1:x12:piece lengthi16384ee",
			"a file tree without meta version 2"},
		{"empty file tree without meta version", "d9:file treede6:lengthi1e4:name1:x12:piece lengthi16384ee",
			"a file tree without meta version 2"},
		{"file tree with meta version 1", "d9:file treed1:x" + leaf("6:lengthi1e"+root) + "e6:lengthi1e12:meta versioni1e4:name1:x12:piece lengthi16384ee",
			"a file tree without meta version 2"},
		{"file tree that is a list, no meta version", "d9:file treeli1ee6:lengthi1e4:name1:x12:piece lengthi16384ee", ""},
		{"file tree that is a string, meta version 1", "d9:file tree1:x6:lengthi1e12:meta versioni1e4:name1:x12:piece lengthi16384ee", ""},
		// BEP 47 pad files in a file tree (BEP 52 has none)
		{"v2 pad file", v2(leaf("4:attr1:p6:lengthi1e"+root), "16384"), `file tree file "a" is a pad file`},
		{"v2 pad file without bytes", v2(leaf("4:attr2:hp6:lengthi0e"), "16384"), "is a pad file"},
		{"v2 executable file", v2(leaf("4:attr1:x6:lengthi1e"+root), "16384"), ""},
		{"hybrid with a pad in its file tree", "d9:file treed1:a" + leaf("4:attr1:p6:lengthi1e"+root) +
			"e6:lengthi1e12:meta versioni2e4:name1:a12:piece lengthi16384ee", "is a pad file"},
		{"file with a sibling", v2("d0:d6:lengthi1e"+root+"e1:bd0:d6:lengthi2e"+root+"eee", "16384"), `file "a" has 1 sibling entries`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse([]byte(tt.info))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Parse: %v, want it accepted", err)
				}
				if m.FileCount == nil || int(*m.FileCount) != len(m.Files) {
					t.Fatalf("file_count %v for %d files", m.FileCount, len(m.Files))
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse: %.300v; want ErrInvalid naming %.300q", err, tt.want)
			}
			// ParseAs fails alike, whatever the hash type (the fetch outcome
			// is invalid_metadata, its detail the error).
			for _, typ := range []int8{schema.HashV1, schema.HashV2} {
				if _, err := ParseAs([]byte(tt.info), typ); !errors.Is(err, ErrInvalid) || errors.Is(err, ErrVersion) {
					t.Errorf("ParseAs(%d): %v; want Parse's error", typ, err)
				}
			}
		})
	}
}
