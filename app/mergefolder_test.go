package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMergeEmptyFolderCLI: merge --data D given only a folder that
// holds no results file (no fetch has written one yet) exits 0 with one
// info line that says there is nothing to apply, and no done line; a
// bare merge with nothing in D/inbox/merge/ stays bad input, as does a
// --data that holds no dataset. merge --help says which names a folder
// gives and where --from creates a dataset.
func TestMergeEmptyFolderCLI(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ih")
	seedHashes(t, data, 3, 7)
	res := filepath.Join(dir, "res")
	if err := os.Mkdir(res, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(res, "notes.txt"), []byte("x\n"), 0o644)
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"an empty folder", []string{"merge", "--data", data, res}, 0, "merge: " + res + ": no input files; nothing to apply"},
		{"a bare run", []string{"merge", "--data", data}, 2, "merge: no input"},
		{"no dataset", []string{"merge", "--data", filepath.Join(dir, "nodata"), res}, 2, "nodata"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runMain(t, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want exit %d saying %q", code, stderr, tt.code, tt.want)
			}
			if code == 0 && (strings.Count(strings.TrimSpace(stderr), "\n") != 0 || strings.Contains(stderr, "merge: done")) {
				t.Fatalf("stderr %q, want one info line", stderr)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "nodata")); !os.IsNotExist(err) {
		t.Fatalf("nodata made (%v), want nothing made", err)
	}
	help := strings.Join(strings.Fields(string(mustRun(t, nil, "merge", "--help"))), " ")
	for _, want := range []string{"*.parquet, *.arrows and *.arrow", "only in a new or empty folder"} {
		if !strings.Contains(help, want) {
			t.Errorf("merge --help does not say %q", want)
		}
	}
}
