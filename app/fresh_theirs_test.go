package app

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestFreshDataInUserFolderRemovedOnBadInput: a first run on a folder
// that holds the user's files (a README, a cron line's lock file) and no
// dataset, which then commits nothing, removes what it made and leaves
// exactly the user's files.
func TestFreshDataInUserFolderRemovedOnBadInput(t *testing.T) {
	dir := t.TempDir()
	in := freshInputs(t, dir)
	for _, k := range []string{"bad.txt", "truncated.parquet", "jobs.parquet"} {
		t.Run(k, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "d")
			if err := os.MkdirAll(filepath.Join(data, "work"), 0o755); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"README", ".pass.lock"} {
				if err := os.WriteFile(filepath.Join(data, name), []byte("x\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if _, stderr, code := runMain(t, "dedup", "--data", data, in[k]); code != 2 {
				t.Fatalf("exit %d, stderr %q; want 2", code, stderr)
			}
			ents, err := os.ReadDir(data)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			if want := []string{".pass.lock", "README", "work"}; !slices.Equal(names, want) {
				t.Errorf("%s holds %v, want only the user's %v", data, names, want)
			}
		})
	}
}
