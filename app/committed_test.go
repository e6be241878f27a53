package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// committedCase is a writer's run that commits snapshot 2 of a dataset
// that dedup made with one hash (snapshot 1).
type committedCase struct {
	name  string
	table string // a table the run's commit points a new link at
	// args runs it (data: the dataset; out: a folder for outputs);
	// stdin is its standard input.
	args  func(data, out string) []string
	stdin func(t *testing.T) []byte
	check func(t *testing.T, out, stderr string) // what the run kept
}

const committedHash = "0123456789abcdef0123456789abcdef01234567"

var committedCases = []committedCase{
	{name: "dedup", table: "state",
		args: func(data, out string) []string {
			return []string{"dedup", "--data", data, "--far-now", "--now", "2026-03-01T01:00:00Z", "-"}
		},
		stdin: func(*testing.T) []byte { return []byte("fedcba9876543210fedcba9876543210fedcba98\n") },
	},
	{name: "merge", table: "state",
		args: func(data, out string) []string {
			return []string{"merge", "--data", data, "--far-now", "--now", "2026-03-01T01:00:00Z", "-"}
		},
		stdin: func(t *testing.T) []byte {
			h, _, _, err := schema.ParseHex(committedHash)
			if err != nil {
				t.Fatal(err)
			}
			return resultsArrow(t, []schema.Result{{InfoHash: h, HashType: 1, AttemptedAt: 1772326800000,
				Outcome: schema.OutcomeNoPeers, PeerFailures: []schema.PeerFailure{}}})
		},
	},
	{name: "plan-retries", table: "leases",
		args: func(data, out string) []string {
			return []string{"plan-retries", "--data", data, "--far-now", "--now", "2026-03-01T01:00:00Z", "-o", filepath.Join(out, "jobs.parquet")}
		},
		check: func(t *testing.T, out, stderr string) {
			r, err := rowio.Open[schema.Job](filepath.Join(out, "jobs.parquet"), nil)
			if err != nil {
				t.Fatalf("the jobs file: %v", err)
			}
			defer r.Close()
			if jobs, err := r.ReadAll(); err != nil || len(jobs) != 1 {
				t.Fatalf("the jobs file holds %d jobs (%v), want the 1 leased", len(jobs), err)
			}
			if !strings.Contains(stderr, "1 job stays leased until 2026-03-01T03:00:00Z") {
				t.Fatalf("no word of the lease:\n%s", stderr)
			}
		},
	},
}

// newCommittedData makes the dataset a committedCase starts from.
func newCommittedData(t *testing.T) (data, out string) {
	t.Helper()
	dir := t.TempDir()
	data, out = filepath.Join(dir, "ds"), filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runMainIn(t, []byte(committedHash+"\n"), "dedup", "--data", data, "--far-now", "--now", "2026-03-01T00:00:00Z", "-"); code != 0 {
		t.Fatalf("dedup: exit %d: %s", code, stderr)
	}
	return data, out
}

// TestFailureAfterCommitSaysCommitted: when a step after the commit point
// fails (a table's current link cannot be replaced), a writer exits 1
// saying which snapshot it committed and what failed, keeps what it
// wrote, and writes its counters; the next run finds the work done and
// rolls the link forward.
func TestFailureAfterCommitSaysCommitted(t *testing.T) {
	for _, tt := range committedCases {
		t.Run(tt.name, func(t *testing.T) {
			data, out := newCommittedData(t)
			link := filepath.Join(data, tt.table, "current")
			os.Remove(link)
			if err := os.MkdirAll(filepath.Join(link, "x"), 0o755); err != nil { // a rename over it fails, as root too
				t.Fatal(err)
			}
			var stdin []byte
			if tt.stdin != nil {
				stdin = tt.stdin(t)
			}
			stats := filepath.Join(out, "stats.json")
			_, stderr, code := runMainIn(t, stdin, append(tt.args(data, out), "--stats-json", stats)...)
			want := "infohash: " + tt.name + ": dataset: " + data + ": committed snapshot 2; then: pointing " + tt.table + "/current at v/000000000002: rename: "
			if code != 1 || !strings.Contains(stderr, want) {
				t.Fatalf("exit %d, want 1 and %q:\n%s", code, want, stderr)
			}
			if strings.Contains(stderr, " done") {
				t.Fatalf("a run that failed says done:\n%s", stderr)
			}
			if snap, _ := currentManifest(t, data); snap != 2 {
				t.Fatalf("the dataset is at snapshot %d, want 2", snap)
			}
			if b, err := os.ReadFile(stats); err != nil || !strings.Contains(string(b), `"snapshot": 2`) {
				t.Fatalf("--stats-json: %s (%v), want snapshot 2", b, err)
			}
			if tt.check != nil {
				tt.check(t, out, stderr)
			}

			if err := os.RemoveAll(link); err != nil {
				t.Fatal(err)
			}
			if tt.name != "plan-retries" { // the same input again: applied already
				_, stderr, code = runMainIn(t, stdin, tt.args(data, out)...)
				if code != 0 || !strings.Contains(stderr, "already_applied=1") {
					t.Fatalf("the same input again: exit %d, want 0 and it already applied:\n%s", code, stderr)
				}
			} else {
				// The jobs went to a fetch: the next run does not write
				// over their file while they are leased (--replace).
				if err := os.Rename(filepath.Join(out, "jobs.parquet"), filepath.Join(out, "fetching.parquet")); err != nil {
					t.Fatal(err)
				}
				if _, stderr, code = runMain(t, tt.args(data, out)...); code != 0 || !strings.Contains(stderr, "planned=0") {
					t.Fatalf("plan-retries again: exit %d, want 0 and no job (the hash is leased):\n%s", code, stderr)
				}
			}
			if got, _ := os.Readlink(link); got != "v/000000000002" {
				t.Fatalf("%s -> %q, want the committed snapshot's v/000000000002", link, got)
			}
		})
	}
}

// TestReportAfterCommitSaysCommitted: a --stats-json that cannot be
// written after the commit (a full disk: /dev/full) says that the
// snapshot was committed; without a commit it does not.
func TestReportAfterCommitSaysCommitted(t *testing.T) {
	for _, tt := range committedCases {
		t.Run(tt.name, func(t *testing.T) {
			data, out := newCommittedData(t)
			var stdin []byte
			if tt.stdin != nil {
				stdin = tt.stdin(t)
			}
			_, stderr, code := runMainIn(t, stdin, append(tt.args(data, out), "--stats-json", "/dev/full")...)
			want := "infohash: " + tt.name + ": committed snapshot 2; then: --stats-json: write /dev/full: no space left on device (only the report is missing)\n"
			if code != 1 || !strings.HasSuffix(stderr, want) {
				t.Fatalf("exit %d, want 1 and %q:\n%s", code, want, stderr)
			}
			if tt.name == "plan-retries" {
				return // a second run commits (its cold sweep): no case without a commit
			}
			_, stderr, code = runMainIn(t, stdin, append(tt.args(data, out), "--stats-json", "/dev/full")...)
			if want := "infohash: " + tt.name + ": --stats-json: write /dev/full: no space left on device\n"; code != 1 || !strings.HasSuffix(stderr, want) {
				t.Fatalf("nothing committed: exit %d, want 1 and %q:\n%s", code, want, stderr)
			}
		})
	}
}
