package infodict

import (
	"slices"
	"testing"
)

// TestV2FileTreeKeyOrder: a BEP 52 file tree is taken whatever order its
// keys come in, as the rest of an info dictionary is, and its files are
// listed in key order. The anacrolix decoder refused unsorted keys in
// it, which made such a torrent invalid_metadata.
func TestV2FileTreeKeyOrder(t *testing.T) {
	file := func(n string) string { return "d0:d6:lengthi" + n + "e11:pieces root32:" + root32 + "ee" }
	tests := []struct {
		name  string
		tree  string
		paths []string // nil: invalid
	}{
		{"sorted", "d1:a" + file("1") + "1:bd1:c" + file("2") + "1:d" + file("3") + "ee", []string{"a", "b/c", "b/d"}},
		{"unsorted at the root", "d1:bd1:c" + file("2") + "1:d" + file("3") + "e1:a" + file("1") + "e", []string{"a", "b/c", "b/d"}},
		{"unsorted in a directory", "d1:a" + file("1") + "1:bd1:d" + file("3") + "1:c" + file("2") + "ee", []string{"a", "b/c", "b/d"}},
		{"file attributes unsorted", "d1:ad0:d11:pieces root32:" + string(make([]byte, 32)) + "6:lengthi1eeee", []string{"a"}},
		{"empty", "de", []string{}},
		{"file without length", "d1:ad0:d1:xi1eeee", nil},
		{"negative length", "d1:a" + file("-1") + "e", nil},
		{"entry not a dictionary", "d1:ai1ee", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse([]byte("d9:file tree" + tt.tree + "12:meta versioni2e4:name1:x12:piece lengthi16384ee"))
			if tt.paths == nil {
				if err == nil {
					t.Fatalf("accepted, files %+v; want invalid", m.Files)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			paths := []string{}
			for _, f := range m.Files {
				paths = append(paths, f.Path)
			}
			if !slices.Equal(paths, tt.paths) {
				t.Fatalf("files %q, want %q", paths, tt.paths)
			}
		})
	}
}
