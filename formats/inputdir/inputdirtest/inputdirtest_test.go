package inputdirtest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/formats/inputdir"
)

// TestBuild: a Folder lists as its four input files beside a temporary
// file and two others, and its Busy stream reads as being written
// (fsutil.Writing) until Release; the others never do.
func TestBuild(t *testing.T) {
	stream, ends := Stream(t, []struct{ N int64 }{{1}, {2}, {3}}, 2)
	if len(ends) != 2 || ends[0] >= ends[1] || ends[1] > len(stream) {
		t.Fatalf("ends %v in a %d-byte stream, want two batches", ends, len(stream))
	}
	f := Build(t, Contents{Parquet: []byte("PAR1"), Whole: stream, Cut: stream[:ends[0]+3], Busy: stream})
	files, others, temps, err := inputdir.List(f.Dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(f.Dir, "a.parquet"), filepath.Join(f.Dir, "b.arrows"), f.Busy, f.Cut}
	if !slices.Equal(files, want) || len(others) != 2 || len(temps) != 1 {
		t.Fatalf("List = %q, %q, %q; want files %q, 2 others, 1 temporary file", files, others, temps, want)
	}
	for _, p := range files {
		if _, busy := fsutil.Writing(p); busy != (p == f.Busy) {
			t.Fatalf("Writing(%s) = %v", p, busy)
		}
	}
	f.Release()
	if who, busy := fsutil.Writing(f.Busy); busy {
		t.Fatalf("%s still held by %s after Release", f.Busy, who)
	}
}

// TestNothing: the inputs that hold nothing to apply are what they say.
func TestNothing(t *testing.T) {
	paths := Nothing(t, t.TempDir())
	if !inputdir.Empty(paths["empty"]) || !inputdir.Empty(paths["list"]) || paths["-"] != "-" {
		t.Fatalf("%q: want two folders holding no input file, and stdin", paths)
	}
	if st, err := os.Stat(paths["blank"]); err != nil || st.Size() != 0 {
		t.Fatalf("blank: %v, %v; want an empty file", st, err)
	}
	if _, err := os.Lstat(paths["missing"]); !os.IsNotExist(err) {
		t.Fatalf("missing: %v, want nothing there", err)
	}
}
