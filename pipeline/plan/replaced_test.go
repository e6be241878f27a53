package plan

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/internal/exitcode"
)

// TestReplacingALeasedJobsFile: a run to the -o FILE of an earlier run
// whose jobs are still leased (no fetch and merge took them) is refused,
// exit 2, leaving the file and the leases as they were: writing over it
// would strand those leases until lease_until. With Replace it ends them
// in its commit, and every live lease is then one its own jobs file
// carries. A file whose leases are over, or that is no jobs file, is
// replaced as before.
func TestReplacingALeasedJobsFile(t *testing.T) {
	for _, tt := range []struct {
		name    string
		after   time.Duration // from the first run to the second
		garbage bool          // FILE is no jobs file
		replace bool
		refused bool
		ended   int // leases of FILE's jobs ended
		planned int // of the 10 hashes, at most 7
	}{
		{"still leased", time.Minute, false, false, true, 0, 0},
		{"still leased, --replace", time.Minute, false, true, false, 5, 7},
		{"leases over", 3 * time.Hour, false, false, false, 0, 7},
		{"not a jobs file", time.Minute, true, false, false, 0, 5}, // the first 5 stay leased
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := tenNew(t)
			o := planOptions(t, dir)
			o.Limit = 5
			first, err := Run(context.Background(), o)
			if err != nil || first.Planned != 5 {
				t.Fatalf("first run: %v, %d planned", err, first.Planned)
			}
			if tt.garbage {
				if err := os.WriteFile(o.Output, []byte("not parquet\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before, snap := leasesAt(t, dir)
			o.Now, o.Replace, o.Limit = t0.Add(tt.after), tt.replace, 7
			st, err := Run(context.Background(), o)
			if tt.refused {
				if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "holds 5 jobs still leased") ||
					!strings.Contains(err.Error(), "--replace") {
					t.Fatalf("second run: %v (exit %d), want a refusal naming --replace, exit 2", err, exitcode.Of(err))
				}
				if after, s := leasesAt(t, dir); s != snap || len(after) != len(before) {
					t.Errorf("refused run committed: snapshot %d, was %d", s, snap)
				}
				if jobs := readJobs(t, o.Output); len(jobs) != 5 || jobs[0].LeaseID != first.LeaseID {
					t.Errorf("refused run changed the jobs file: %d jobs", len(jobs))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.ReplacedEnded != tt.ended {
				t.Errorf("ended %d of the replaced file's leases, want %d", st.ReplacedEnded, tt.ended)
			}
			jobs := jobSet(readJobs(t, o.Output))
			if len(jobs) != st.Planned || st.Planned != tt.planned {
				t.Fatalf("jobs file: %d jobs, planned %d, want %d", len(jobs), st.Planned, tt.planned)
			}
			leases, _ := leasesAt(t, dir)
			for h, l := range leases {
				if l.LeaseUntil <= ms(o.Now) {
					continue
				}
				if j, ok := jobs[h]; (!ok || j.LeaseID != l.LeaseID) && !tt.garbage {
					t.Errorf("%x: live lease %s that the jobs file does not carry", h[:4], l.LeaseID)
				}
			}
		})
	}
}
