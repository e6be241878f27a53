package app

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestFreshDataInUserFolderRemovedOnBadInput: a first run on a folder
// that holds no dataset but what a dataset may be made among (a cron
// line's lock file, crawl-pass's work/, capture's dht-state/), which then
// commits nothing, removes what it made and leaves exactly those.
func TestFreshDataInUserFolderRemovedOnBadInput(t *testing.T) {
	dir := t.TempDir()
	in := freshInputs(t, dir)
	for _, k := range []string{"bad.txt", "truncated.parquet", "jobs.parquet"} {
		t.Run(k, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "d")
			for _, name := range []string{"work", "dht-state"} {
				if err := os.MkdirAll(filepath.Join(data, name), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for _, name := range []string{filepath.Join("dht-state", "dht-state.json"), ".pass.lock"} {
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
			if want := []string{".pass.lock", "dht-state", "work"}; !slices.Equal(names, want) {
				t.Errorf("%s holds %v, want only the user's %v", data, names, want)
			}
		})
	}
}

// TestNoDatasetAmongUserFiles: dedup makes no dataset in a folder that
// holds other files and no dataset (--data ., --data ~): one line, exit 2,
// the folder as it was; the same input into a new folder is applied.
func TestNoDatasetAmongUserFiles(t *testing.T) {
	dir := t.TempDir()
	in := freshInputs(t, dir)["good.txt"]
	data := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(filepath.Join(data, "Documents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, ".bashrc"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runMain(t, "dedup", "--data", data, in)
	want := "infohash: dedup: dataset: " + data + `: not an infohash dataset and not empty (it holds ".bashrc", "Documents"); give a new or empty folder` + "\n"
	if code != 2 || stderr != want {
		t.Fatalf("exit %d, stderr %q; want 2 and %q", code, stderr, want)
	}
	ents, err := os.ReadDir(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 2 {
		t.Errorf("%s holds %d entries, want the user's 2", data, len(ents))
	}
	if _, stderr, code := runMain(t, "dedup", "--data", filepath.Join(data, "Documents"), in); code != 0 {
		t.Fatalf("into the empty folder: exit %d, stderr %q", code, stderr)
	}
}
