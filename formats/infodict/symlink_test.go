package infodict

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestSymlinks: a BEP 47 symlink (attr string holding "l") holds no bytes
// of the torrent, as libtorrent takes it: Parse and ParseWithPads list it
// with length 0 and leave it out of total_size, in "files" and in a file
// tree alike, whatever its "length" holds (none, negative, no integer);
// any other file still needs a length of at least 0. A single file (a
// "length") is a symlink when the info dictionary's own "attr" holds "l",
// as libtorrent reads it.
func TestSymlinks(t *testing.T) {
	const tail = "e4:name1:d12:piece lengthi16384ee"
	v1 := func(files ...string) string { return "d5:filesl" + strings.Join(files, "") + tail }
	a := "d6:lengthi100e4:pathl1:aee"
	link := func(attr, length string) string { // a "files" entry named l
		return "d4:attr" + attr + length + "4:pathl1:le12:symlink pathl1:aee"
	}
	tree := func(attrs string) string {
		return "d9:file treed1:ad0:d6:lengthi100e11:pieces root32:" + root32 + "ee1:ld0:d" + attrs +
			"eee12:meta versioni2e4:name1:d12:piece lengthi16384ee"
	}
	single := func(attr, length string) string { return "d" + attr + length + "4:name1:d12:piece lengthi16384ee" }
	for _, tt := range []struct {
		name    string
		info    string
		lengths []int64 // listed files' lengths, in order
		size    int64
		want    string // "" for accepted, else what the error names
	}{
		{"v1 symlink of 5 bytes", v1(a, link("1:l", "6:lengthi5e")), []int64{100, 0}, 100, ""},
		{"v1 symlink without length", v1(a, link("1:l", "")), []int64{100, 0}, 100, ""},
		{"v1 symlink of a negative length", v1(a, link("1:l", "6:lengthi-5e")), []int64{100, 0}, 100, ""},
		{"v1 symlink whose length is a string", v1(a, link("2:xl", "6:length1:5")), []int64{100, 0}, 100, ""},
		{"v1 symlink whose length is a list", v1(link("1:l", "6:lengthli5ee"), a), []int64{0, 100}, 100, ""},
		{"attr no string: no symlink", v1(a, link("i1e", "6:lengthi5e")), []int64{100, 5}, 105, ""},
		{"executable: no symlink", v1(a, link("1:x", "6:lengthi5e")), []int64{100, 5}, 105, ""},
		{"v2 symlink of 5 bytes", tree("4:attr1:l6:lengthi5e"), []int64{100, 0}, 100, ""},
		{"v2 symlink without length", tree("4:attr1:l"), []int64{100, 0}, 100, ""},
		{"v2 empty file", tree("6:lengthi0e"), []int64{100, 0}, 100, ""},
		{"single-file symlink of 5 bytes", single("4:attr1:l", "6:lengthi5e"), []int64{0}, 0, ""},
		{"single-file symlink of a negative length", single("4:attr1:l", "6:lengthi-5e"), []int64{0}, 0, ""},
		{"single-file symlink whose length is a string", single("4:attr2:xl", "6:length1:5"), []int64{0}, 0, ""},
		{"single file, attr x: no symlink", single("4:attr1:x", "6:lengthi5e"), []int64{5}, 5, ""},
		{"single file, attr no string: no symlink", single("4:attri1e", "6:lengthi5e"), []int64{5}, 5, ""},
		{"single file of a negative length", single("", "6:lengthi-5e"), nil, 0, `length "i-5e"`},
		{"single file, attr x, length a string", single("4:attr1:x", "6:length1:5"), nil, 0, `length "1:5"`},
		{"hybrid single-file symlink against a tree symlink", "d4:attr1:l9:file treed1:dd0:d4:attr1:l12:symlink pathl1:xeeee" +
			"6:lengthi5e12:meta versioni2e4:name1:d12:piece lengthi16384ee", []int64{0}, 0, ""},
		{"hybrid single-file symlink against a tree file of 5 bytes", "d4:attr1:l9:file treed1:dd0:d6:lengthi5e11:pieces root32:" +
			root32 + "eee6:lengthi5e12:meta versioni2e4:name1:d12:piece lengthi16384ee", nil, 0, "the single file has 0 bytes, 5 in the file tree"},
		{"v1 file whose length is a string", v1(a, "d6:length1:54:pathl1:bee"), nil, 0, `file 1 has a length "1:5" that is not an integer`},
		{"v1 file of a negative length", v1(a, "d6:lengthi-5e4:pathl1:bee"), nil, 0, "file 1 has a negative length"},
		{"v1 file without length", v1(a, "d4:pathl1:bee"), nil, 0, "file 1 has no length"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, parse := range []func([]byte) (schema.Meta, error){Parse, ParseWithPads} {
				m, err := parse([]byte(tt.info))
				if tt.want != "" {
					if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
						t.Fatalf("err %v; want ErrInvalid naming %q", err, tt.want)
					}
					continue
				}
				if err != nil {
					t.Fatalf("err %v, want it accepted", err)
				}
				var got []int64
				for _, f := range m.Files {
					got = append(got, f.Length)
				}
				if !slices.Equal(got, tt.lengths) || *m.TotalSize != tt.size || int(*m.FileCount) != len(tt.lengths) {
					t.Errorf("lengths %v, total_size %d, file_count %d; want %v, %d", got, *m.TotalSize, *m.FileCount, tt.lengths, tt.size)
				}
			}
		})
	}
}
