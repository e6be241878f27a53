package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEmptyFolderChecksDIR: dedup and merge given only folders that hold
// no input file (a cron run before any capture or fetch finished) have
// one rule: nothing to do, exit 0, nothing opened or made, once DIR is one
// a run with input would take; a DIR that run would refuse is refused
// (exit 2), so that a typo is told at once. dedup takes a missing DIR in
// an existing folder (its first input makes the dataset): it stays
// missing. merge takes only a dataset (its results come from that
// dataset's plan-retries): a missing or empty DIR is refused. Both
// --help texts say the rule. dedup said exit 0 for a DIR under a missing
// folder and for a folder of other files, which it refuses with input.
func TestEmptyFolderChecksDIR(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "res")
	theirs := filepath.Join(dir, "theirs")
	empty := filepath.Join(dir, "empty")
	for _, d := range []string{res, filepath.Join(theirs, "notes"), empty} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name string
		cmd  string
		data string
		code int
		want string // in stderr
	}{
		{"dedup, a missing DIR", "dedup", filepath.Join(dir, "new"), 0, "no input files; nothing to apply"},
		{"dedup, an empty DIR", "dedup", empty, 0, "no input files; nothing to apply"},
		{"dedup, a DIR in a missing folder", "dedup", filepath.Join(dir, "nope", "ih"), 2, "parent folder " + filepath.Join(dir, "nope") + " does not exist"},
		{"dedup, a folder of other files", "dedup", theirs, 2, "not an infohash dataset and not empty"},
		{"merge, a missing DIR", "merge", filepath.Join(dir, "new"), 2, "the folder does not exist"},
		{"merge, an empty DIR", "merge", empty, 2, "not an infohash dataset"},
		{"merge, a DIR in a missing folder", "merge", filepath.Join(dir, "nope", "ih"), 2, "the folder does not exist"},
		{"merge, a folder of other files", "merge", theirs, 2, "not an infohash dataset"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runMain(t, tt.cmd, "--data", tt.data, res)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want exit %d saying %q", code, stderr, tt.code, tt.want)
			}
			for d, want := range map[string]int{filepath.Join(dir, "new"): -1, filepath.Join(dir, "nope"): -1, empty: 0, theirs: 1} {
				ents, err := os.ReadDir(d)
				if want < 0 && !os.IsNotExist(err) || want >= 0 && len(ents) != want {
					t.Fatalf("%s holds %d entries (%v), want %d (-1: missing): nothing made", d, len(ents), err, want)
				}
			}
		})
	}
	for _, tt := range []struct{ cmd, want string }{
		{"dedup", "but a DIR refused with input is refused all the same, exit 2"},
		{"merge", "DIR must still hold a dataset, as for any merge but --from"},
	} {
		if help := strings.Join(strings.Fields(helpOf(t, tt.cmd)), " "); !strings.Contains(help, tt.want) {
			t.Errorf("%s --help does not say %q", tt.cmd, tt.want)
		}
	}
}
