package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestErrorsNameCommand: every command's error line starts with its name,
// errors of the dataset layer too (a dedup that could not make its
// staging folder said only "infohash: dataset: mkdir DIR/staging:
// ..."), and a line that names the command already does not name it
// twice.
func TestErrorsNameCommand(t *testing.T) {
	dir, data := seedDataset(t)
	_, other := seedDataset(t)
	// A file where the staging folder goes: every writer fails in the
	// dataset layer, as one whose staging/ it may not write does.
	if err := os.RemoveAll(filepath.Join(data, "staging")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "staging"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	list := filepath.Join(dir, "list.txt")
	if err := os.WriteFile(list, []byte("1111111111111111111111111111111111111111\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct {
		name string
		args []string
		want string // the line starts so
	}{
		{"dedup, dataset layer", []string{"dedup", "--data", data, list}, "infohash: dedup: dataset: "},
		{"plan-retries, dataset layer", []string{"plan-retries", "--data", data, "-o", filepath.Join(dir, "jobs.parquet")}, "infohash: plan-retries: dataset: "},
		{"merge, dataset layer", []string{"merge", "--data", data, "--from", other}, "infohash: merge: dataset: "},
		{"status, no dataset", []string{"status", "--data", missing}, "infohash: status: dataset: "},
		{"export, no dataset", []string{"export", "--data", missing, "-o", filepath.Join(dir, "out.parquet")}, "infohash: export: "},
		{"policy show, no dataset", []string{"policy", "show", "--data", missing}, "infohash: policy show: dataset: "},
		{"dedup names itself", []string{"dedup", "--data", other, filepath.Join(dir, "none.txt")}, "infohash: dedup: "},
		{"merge --from names itself", []string{"merge", "--data", other, "--from", missing}, "infohash: merge --from: "},
		{"policy names itself", []string{"policy", "nosuch", "--data", other}, "infohash: policy: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runMain(t, tc.args...)
			cmd := tc.args[0]
			if code == 0 || !strings.HasPrefix(stderr, tc.want) || strings.Contains(stderr, cmd+": "+cmd) {
				t.Errorf("exit %d, stderr %q; want a failure whose line starts %q and names %s once", code, stderr, tc.want, cmd)
			}
		})
	}
}
