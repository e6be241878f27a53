package dedup

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// TestKeepOnACopy: dedup's first run on a copy of a dataset (`cp -a`)
// commits the copy's new id with its batch, in one commit that keeps
// --keep snapshots. A commit for the id alone, made as the dataset was
// opened, kept the default 3 whatever --keep said, collecting the
// snapshots the run was told to keep.
func TestKeepOnACopy(t *testing.T) {
	orig := filepath.Join(t.TempDir(), "ih")
	in := t.TempDir()
	keep := func(o *Options) { o.Keep = 10 }
	for i := range 5 {
		if _, err := run(t, orig, keep, writeObs(t, in, genObs(uint64(40+i), 50, 20))); err != nil {
			t.Fatal(err)
		}
	}
	copied := filepath.Join(t.TempDir(), "copy")
	if out, err := exec.Command("cp", "-a", orig, copied).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v\n%s", err, out)
	}
	before := manifestsIn(t, copied)
	if _, err := run(t, copied, keep, writeObs(t, in, genObs(50, 50, 20))); err != nil {
		t.Fatal(err)
	}
	n := len(before) // snapshots 0 (create) to n-1: the copy's id and the batch are n
	want := append(before, fmt.Sprintf("%012d.json", n))
	if got := manifestsIn(t, copied); !slices.Equal(got, want) {
		t.Fatalf("dedup --keep 10 on a copy left the manifests %v, want %v", got, want)
	}
}

// manifestsIn lists the manifests of the dataset in dir, sorted.
func manifestsIn(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "manifests", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range names {
		names[i] = filepath.Base(names[i])
	}
	slices.Sort(names)
	return names
}
