package app

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestNestedDataRefused: every command that makes or writes a dataset
// refuses a --data inside another dataset (its inbox/, a new folder under
// its staging/, however spelt, or from INFOHASH_DATA), exit 2, one line
// naming both, and makes nothing there; the outer dataset is left as it
// was. A reader (status) is not refused for it.
func TestNestedDataRefused(t *testing.T) {
	dir, data := seedDataset(t)
	in := filepath.Join(dir, "h.txt")
	inbox := filepath.Join(data, "inbox")
	dotdot := data + "/state/../inbox/" // not cleaned
	before := names(t, data)
	for _, tc := range []struct {
		name string
		env  string // INFOHASH_DATA, for args without --data
		args []string
		dir  string // the --data refused
	}{
		{"dedup", "", []string{"dedup", "--data", inbox, in}, inbox},
		{"dedup staging", "", []string{"dedup", "--data", filepath.Join(data, "staging", "x"), in}, filepath.Join(data, "staging", "x")},
		{"dedup dotdot", "", []string{"dedup", "--data", dotdot, in}, dotdot},
		{"dedup env", inbox, []string{"dedup", in}, inbox},
		{"merge", "", []string{"merge", "--data", inbox, in}, inbox},
		{"plan-retries", "", []string{"plan-retries", "--data", inbox, "-o", filepath.Join(dir, "jobs.parquet")}, inbox},
		{"policy set", "", []string{"policy", "set", "--data", inbox, "jitter=0.2"}, inbox},
		{"capture", "", []string{"capture", "--data", inbox, "-o", filepath.Join(dir, "obs.parquet"), "--duration", "1s",
			"--bootstrap=", "--dht-listen", "127.0.0.1:0"}, inbox}, // loopback only, refused or not
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("INFOHASH_DATA", tc.env)
			_, stderr, code := runMain(t, tc.args...)
			want := "infohash: " + commandOf(tc.args) + ": --data " + tc.dir + ": inside the dataset " + data + "; choose a folder outside it\n"
			if code != 2 || stderr != want {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, stderr, want)
			}
			if got := names(t, inbox); len(got) != 0 {
				t.Fatalf("%s holds %q, want nothing", inbox, got)
			}
			if got := names(t, filepath.Join(data, "staging")); len(got) != 0 {
				t.Fatalf("staging holds %q, want nothing", got)
			}
			if after := names(t, data); !slices.Equal(after, before) {
				t.Fatalf("%s holds %q, want %q", data, after, before)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "jobs.parquet")); err == nil {
		t.Fatal("plan-retries wrote its -o")
	}
	// A reader says there is no dataset there, as for any other folder,
	// and names the one it lies in.
	_, stderr, code := runMain(t, "status", "--data", inbox)
	if want := "infohash: status: dataset: " + inbox + ": not an infohash dataset (no CURRENT file); it lies inside the dataset " + data +
		": give that folder\n"; code != 2 || stderr != want {
		t.Fatalf("status: exit %d, stderr %q; want 2 and %q", code, stderr, want)
	}
}

// commandOf is the command args run, as errors name it ("policy set").
func commandOf(args []string) string {
	if args[0] == "policy" {
		return "policy " + args[1]
	}
	return args[0]
}
