package plan

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestUnpublishedJobsArePlannedAgain: a run to -o FILE killed between
// its commit and the rename of its jobs file leaves the leases committed
// and the jobs under a temporary name (here: the published file renamed
// back). The next run to the same -o drops those leases from the table
// (nobody saw the file: no fetch can be reading it), live or expired,
// plans their hashes again under its own, as many as its --limit takes,
// and removes the file: no ended lease of a job nobody saw stays behind
// for status to call a fetch that died. A file whose leases the dataset
// does not hold as they are in the file (never committed) drops nothing;
// one a live writer holds is left alone, and the run is refused (exit 2,
// nothing leased): that writer renames its file to the same -o next
// (TestTwoRunsToOneOutput).
func TestUnpublishedJobsArePlannedAgain(t *testing.T) {
	const debris = ".tmp-jobs.parquet-L0123456789ab"
	for _, tt := range []struct {
		name string
		// leave puts a temporary jobs file in the output's folder after a
		// first run planned the 10 hashes into out, and returns the time
		// of the next run.
		leave       func(t *testing.T, out string) time.Time
		limit       int  // the next run's --limit
		planned     int  // by the next run (the others keep the first run's live lease)
		dropped     int  // leases it drops
		debrisStays bool // a live writer's
		refused     bool // exit 2
	}{
		{"killed after its commit", func(t *testing.T, out string) time.Time {
			rename(t, out, debris)
			return t0.Add(time.Minute)
		}, 100, 10, 10, false, false},
		{"killed after its commit, fewer planned again", func(t *testing.T, out string) time.Time {
			rename(t, out, debris)
			return t0.Add(time.Minute)
		}, 4, 4, 10, false, false},
		{"leases never committed", func(t *testing.T, out string) time.Time {
			jobs := readJobs(t, out)
			for i := range jobs {
				jobs[i].LeaseID = "L0000000000000000" // a run killed before its commit
			}
			writeJobsFile(t, filepath.Join(filepath.Dir(out), debris), jobs)
			// The first run's jobs file went to a fetch (its leases
			// live): the next run does not write over it.
			rename(t, out, "fetching.parquet")
			return t0.Add(time.Minute)
		}, 100, 0, 0, false, false},
		{"leases expired already", func(t *testing.T, out string) time.Time {
			rename(t, out, debris)
			return t0.Add(3 * time.Hour) // past the 2h lease: due anyway
		}, 4, 4, 10, false, false},
		{"a live writer's", func(t *testing.T, out string) time.Time {
			p := rename(t, out, debris)
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			if err := unix.Flock(int(f.Fd()), unix.LOCK_SH); err != nil {
				t.Fatal(err)
			}
			return t0.Add(time.Minute)
		}, 100, 0, 0, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := tenNew(t)
			o := planOptions(t, dir)
			first, err := Run(context.Background(), o)
			if err != nil || first.Planned != 10 {
				t.Fatalf("first run: %v, %d planned", err, first.Planned)
			}
			o.Now, o.Limit = tt.leave(t, o.Output), tt.limit
			st, err := Run(context.Background(), o)
			if tt.refused {
				if exitcode.Of(err) != exitcode.Usage || st.Committed {
					t.Fatalf("next run = %v (exit %d), committed %v; want exit 2, nothing committed", err, exitcode.Of(err), st.Committed)
				}
				if _, err := os.Stat(filepath.Join(filepath.Dir(o.Output), debris)); err != nil {
					t.Fatalf("the live writer's file: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.Planned != tt.planned || st.UnpublishedEnded != tt.dropped {
				t.Fatalf("planned %d, dropped %d leases; want %d and %d", st.Planned, st.UnpublishedEnded, tt.planned, tt.dropped)
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(o.Output), debris)); (err == nil) != tt.debrisStays {
				t.Fatalf("the temporary jobs file: %v, want it kept: %v", err, tt.debrisStays)
			}
			// Each hash has at most one lease: the first run's, live
			// while its jobs may be out there, or the one the new jobs
			// carry; none of the first run's ended or expired.
			leases, _ := leasesAt(t, dir)
			jobs := jobSet(readJobs(t, o.Output))
			firstLive := 0
			for h, l := range leases {
				switch j, ok := jobs[h]; {
				case l.LeaseID == first.LeaseID && l.LeaseUntil > ms(o.Now):
					firstLive++
				case l.LeaseID == first.LeaseID:
					t.Errorf("%x: the first run's lease, ended or expired (until %d, now %d), is still in the table",
						h[:4], l.LeaseUntil, ms(o.Now))
				case !ok || j.LeaseID != l.LeaseID || l.LeaseID != st.LeaseID:
					t.Errorf("%x: lease %s, not the new jobs file's", h[:4], l.LeaseID)
				}
			}
			if want := 10 - tt.dropped; firstLive != want || len(leases) != want+tt.planned {
				t.Errorf("%d leases, %d of them the first run's (live); want %d and %d", len(leases), firstLive,
					want+tt.planned, want)
			}
		})
	}
}

// rename moves the jobs file out back to a temporary name in its folder,
// as a run killed before it renamed the file into place leaves it, and
// returns its path.
func rename(t *testing.T, out, name string) string {
	t.Helper()
	p := filepath.Join(filepath.Dir(out), name)
	if err := os.Rename(out, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeJobsFile writes jobs as a Parquet file at p.
func writeJobsFile(t *testing.T, p string, jobs []schema.Job) {
	t.Helper()
	w, err := rowio.CreateInternal[schema.Job](p)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(jobs); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestUnpublishedColdHashesAreNotLostForASweep: the killed run's commit
// moved the cold sweep past the window its cold jobs came from, so once
// their leases are dropped the next run to the same -o offers them as if
// their partitions were in its window: they are planned again at once,
// beside its own window's, not a whole sweep later; the sweep moves on as
// it would have. Whether the cold hashes are in cold files or archived in
// place in hot ones. The same inputs and --now plan the same jobs file.
func TestUnpublishedColdHashesAreNotLostForASweep(t *testing.T) {
	const debris = ".tmp-jobs.parquet-L0123456789ab"
	p := schedule.Default()
	p.Plan.ColdShare = 0.5 // room for both windows' due cold hashes
	var states []schema.State
	lost := map[schema.Hash]bool{}
	for _, pre := range []byte{0x01, 0x05, 0x09, 0x0d, 0x12, 0x17} { // the sweep's first window, then its second
		st := failedHash(t, hashAt(pre, uint64(pre)), ms(t0), ms(t0))
		st.Tier = schema.TierCold
		states = append(states, st)
		lost[st.InfoHash] = pre < 0x10
	}
	for i := range uint64(3) {
		states = append(states, newHash(hashAt(0x40, i), ms(t0)))
	}
	for _, tc := range []struct {
		name string
		make func(t *testing.T, states []schema.State) string
	}{
		{"cold files", func(t *testing.T, states []schema.State) string { return makeDataset(t, states, nil) }},
		{"cold rows in hot files", makeHotOnly},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.make(t, states)
			if err := schedule.Save(dir, p); err != nil {
				t.Fatal(err)
			}
			o := planOptions(t, dir)
			o.Now = t0.Add(30 * 24 * time.Hour)
			first, err := Run(context.Background(), o)
			if err != nil || first.Planned != 7 || first.PlannedCold != 4 || first.ColdSweepNext != 16 {
				t.Fatalf("first run: %v, %d planned (%d cold), sweep next %d; want 7 (4 cold), 16", err,
					first.Planned, first.PlannedCold, first.ColdSweepNext)
			}
			rename(t, o.Output, debris) // killed before its rename
			// The same dataset and debris, to plan from twice.
			again := filepath.Join(t.TempDir(), "again")
			datasettest.CopyAsMoved(t, dir, filepath.Join(again, "ds"))
			if err := os.CopyFS(filepath.Join(again, "out"), os.DirFS(filepath.Dir(o.Output))); err != nil {
				t.Fatal(err)
			}
			o.Now = o.Now.Add(time.Minute)
			st, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if st.UnpublishedEnded != 7 || st.ColdSweepStart != 16 || st.ColdSweepNext != 32 {
				t.Fatalf("dropped %d leases, sweep %d -> %d; want 7, 16 -> 32", st.UnpublishedEnded, st.ColdSweepStart, st.ColdSweepNext)
			}
			jobs := jobSet(readJobs(t, o.Output))
			for h, wasLost := range lost {
				if j, ok := jobs[h]; !ok || j.Reason != schema.ReasonCold {
					t.Errorf("%x (cold, lost: %v): planned %v (reason %q); want it planned again as cold", h[:1], wasLost, ok, j.Reason)
				}
			}
			if st.Planned != 9 || st.PlannedCold != 6 {
				t.Errorf("planned %d (%d cold), want 9 (6 cold: 4 lost, 2 of the window)", st.Planned, st.PlannedCold)
			}
			o2 := o
			o2.Data, o2.Output = filepath.Join(again, "ds"), filepath.Join(again, "out", filepath.Base(o.Output))
			if _, err := Run(context.Background(), o2); err != nil {
				t.Fatal(err)
			}
			a, errA := os.ReadFile(o.Output)
			b, errB := os.ReadFile(o2.Output)
			if errA != nil || errB != nil || !bytes.Equal(a, b) {
				t.Errorf("the same dataset, debris and --now planned different jobs files (%v, %v)", errA, errB)
			}
		})
	}
}
