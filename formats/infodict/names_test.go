package infodict

import (
	"slices"
	"testing"
)

// TestNameAndPathColumns: name and name_raw come from "name" when it is a
// string, else from "name.utf-8" (a key of another type is as absent, as
// libtorrent reads it); a file's path and path_raw from "path" when it
// holds an element, else (a valid "path.utf-8" beside it) from
// "path.utf-8"; dictionaries accepted before keep their columns.
func TestNameAndPathColumns(t *testing.T) {
	const tail = "4:name1:d12:piece lengthi16384ee"
	files := func(entries string) string { return "d5:filesl" + entries + "e" + tail }
	for _, tt := range []struct {
		name      string
		info      string
		pads      bool   // ParseWithPads
		wantName  string // name
		wantRaw   string // name_raw
		wantPaths []string
		wantRaws  []string // path_raw; nil when as wantPaths
	}{
		// as before
		{"name and name.utf-8", "d6:lengthi1e4:name1:a10:name.utf-81:b12:piece lengthi16384ee", false, "a", "a", []string{"a"}, nil},
		{"name not UTF-8, name.utf-8", "d6:lengthi1e4:name1:\xff10:name.utf-81:b12:piece lengthi16384ee", false,
			"b", "\xff", []string{"b"}, []string{"\xff"}}, // a single file's path is the name
		{"path and path.utf-8", files("d6:lengthi1e4:pathl1:a1:be10:path.utf-8l1:xee"), false, "d", "d", []string{"a/b"}, nil},
		{"path not UTF-8, path.utf-8", files("d6:lengthi1e4:pathl1:\xffe10:path.utf-8l1:xee"), false,
			"d", "d", []string{"\uFFFD"}, []string{"\xff"}},
		{"pad of an empty path, path.utf-8", files("d4:attr1:p6:lengthi1e4:pathle10:path.utf-8l1:xee"), true, "d", "d", []string{""}, nil},
		{"pad without path, path.utf-8", files("d4:attr1:p6:lengthi1e10:path.utf-8l1:xee"), true, "d", "d", []string{""}, nil},
		// taken now
		{"name.utf-8 a number", "d6:lengthi1e4:name1:a10:name.utf-8i1e12:piece lengthi16384ee", false, "a", "a", []string{"a"}, nil},
		{"name.utf-8 a list, name not UTF-8", "d6:lengthi1e4:name1:\xff10:name.utf-8l1:be12:piece lengthi16384ee", false,
			"\uFFFD", "\xff", []string{"\uFFFD"}, []string{"\xff"}},
		{"name a number", "d6:lengthi1e4:namei1e10:name.utf-81:b12:piece lengthi16384ee", false, "b", "b", []string{"b"}, nil},
		{"name a list, files", "d5:filesld6:lengthi1e4:pathl1:aeee4:nameli1ee10:name.utf-81:b12:piece lengthi16384ee", false,
			"b", "b", []string{"a"}, nil},
		{"path.utf-8 without path", files("d6:lengthi1e10:path.utf-8l1:x1:yee"), false, "d", "d", []string{"x/y"}, nil},
		{"path.utf-8 beside an empty path", files("d6:lengthi1e4:pathle10:path.utf-8l1:xee"), false, "d", "d", []string{"x"}, nil},
		{"path.utf-8 beside a path of a number", files("d6:lengthi1e4:pathli1ee10:path.utf-8l1:\xffee"), false,
			"d", "d", []string{"\uFFFD"}, []string{"\xff"}},
		{"path.utf-8 beside a path that is a string", files("d6:lengthi1e4:path1:a10:path.utf-8l1:xee"), false, "d", "d", []string{"x"}, nil},
		{"pad, path.utf-8 beside a path of a number", files("d4:attr1:p6:lengthi1e4:pathli1ee10:path.utf-8l1:xee"), true,
			"d", "d", []string{"x"}, nil},
		{"pad whose path is a string", files("d4:attr1:p6:lengthi1e4:path1:ae"), true, "d", "d", []string{""}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			parse := Parse
			if tt.pads {
				parse = ParseWithPads
			}
			m, err := parse([]byte(tt.info))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if m.Name == nil || *m.Name != tt.wantName || string(m.NameRaw) != tt.wantRaw {
				t.Errorf("name %v, name_raw %q; want %q, %q", m.Name, m.NameRaw, tt.wantName, tt.wantRaw)
			}
			raws := tt.wantRaws
			if raws == nil {
				raws = tt.wantPaths
			}
			var paths, pathRaws []string
			for _, f := range m.Files {
				paths, pathRaws = append(paths, f.Path), append(pathRaws, string(f.PathRaw))
			}
			if !slices.Equal(paths, tt.wantPaths) || !slices.Equal(pathRaws, raws) {
				t.Errorf("paths %q, path_raw %q; want %q, %q", paths, pathRaws, tt.wantPaths, raws)
			}
		})
	}
}
