package plan

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/leases"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// tenNew is a dataset of 10 never-tried hashes, all due at t0.
func tenNew(t *testing.T) string {
	t.Helper()
	var states []schema.State
	for i := range uint64(10) {
		states = append(states, newHash(hashAt(byte(i*20), i), ms(t0)))
	}
	return makeDataset(t, states, nil)
}

// planOptions plans up to 100 jobs at t0 into a jobs file in a folder of
// its own.
func planOptions(t *testing.T, dir string) Options {
	t.Helper()
	o := DefaultOptions()
	o.Data, o.Now, o.Limit = dir, t0, 100
	o.Output = filepath.Join(t.TempDir(), "jobs.parquet")
	return o
}

// leasesAt returns the leases of dir's current snapshot and its number.
func leasesAt(t *testing.T, dir string) (leases.Set, int64) {
	t.Helper()
	d, err := dataset.OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := d.Current()
	if err != nil {
		t.Fatal(err)
	}
	ls, err := leases.Read(d, m)
	if err != nil {
		t.Fatal(err)
	}
	return ls, m.Snapshot
}

// TestJobsFileIsWrittenBeforeTheLeases: when the leases are committed,
// the jobs file is already on disk whole under its temporary name (a full
// disk would have failed the run before), and it appears at its path
// after.
func TestJobsFileIsWrittenBeforeTheLeases(t *testing.T) {
	dir := tenNew(t)
	o := planOptions(t, dir)
	var atCommit []schema.Job
	o.Committed = func(Stats) {
		if _, err := os.Stat(o.Output); !os.IsNotExist(err) {
			t.Errorf("the jobs file is at its path before the commit returned (%v)", err)
		}
		temps, _ := filepath.Glob(filepath.Join(filepath.Dir(o.Output), ".tmp-*"))
		if len(temps) != 1 {
			t.Errorf("temporary files %v, want one", temps)
			return
		}
		r, err := rowio.Open[schema.Job](temps[0], nil)
		if err != nil {
			t.Errorf("the jobs file is not written out when the leases are committed: %v", err)
			return
		}
		defer r.Close()
		if atCommit, err = r.ReadAll(); err != nil {
			t.Error(err)
		}
	}
	st, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(atCommit) != 10 || st.Planned != 10 || len(readJobs(t, o.Output)) != 10 {
		t.Fatalf("%d jobs written by the commit, %d planned, want 10", len(atCommit), st.Planned)
	}
}

// TestJobsFileThatCannotBeWrittenLeasesNothing: a jobs file that cannot
// be written out (a full disk) fails the run before the commit: no
// lease, no jobs file, and the next run plans the same hashes.
func TestJobsFileThatCannotBeWrittenLeasesNothing(t *testing.T) {
	dir := tenNew(t)
	_, before := leasesAt(t, dir)
	finishJobs = func(w *rowio.Writer[schema.Job]) error {
		return &os.PathError{Op: "write", Path: "jobs.parquet", Err: syscall.ENOSPC}
	}
	t.Cleanup(func() { finishJobs = (*rowio.Writer[schema.Job]).Finish })
	o := planOptions(t, dir)
	st, err := Run(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "no space left on device (nothing leased)") {
		t.Fatalf("error %v, want the full disk, and nothing leased", err)
	}
	if st.Committed {
		t.Fatal("Stats say committed")
	}
	if ls, snap := leasesAt(t, dir); len(ls) != 0 || snap != before {
		t.Fatalf("%d leases in snapshot %d, want none, and snapshot %d", len(ls), snap, before)
	}
	if ents, _ := os.ReadDir(filepath.Dir(o.Output)); len(ents) != 0 {
		t.Fatalf("the output's folder holds %v", ents)
	}
	finishJobs = (*rowio.Writer[schema.Job]).Finish
	if jobs, _ := runPlan(t, dir, ms(t0), 100, nil); len(jobs) != 10 {
		t.Fatalf("the next run planned %d jobs, want the 10", len(jobs))
	}
}

// TestJobsFileSurvivesAFailureAfterTheCommit: when a step after the
// commit point fails (here the leases table's current link cannot be
// made), the leases are committed and the run says so, and the jobs
// file they lease is published.
func TestJobsFileSurvivesAFailureAfterTheCommit(t *testing.T) {
	dir := tenNew(t)
	// Renaming the new link over a non-empty directory fails, as root too.
	// (The link to the first snapshot's 0-row leases file goes first.)
	link := filepath.Join(dir, dataset.TableLeases, "current")
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(link, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	o := planOptions(t, dir)
	st, err := Run(context.Background(), o)
	ac, ok := dataset.AsAfterCommit(err)
	if !ok {
		t.Fatalf("error %v, want one after the commit", err)
	}
	want := "plan-retries: dataset: " + dir + ": committed snapshot 2; then: pointing leases/current at v/000000000002: rename: "
	if !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("error %q\nwant %q…", err, want)
	}
	ls, snap := leasesAt(t, dir)
	if !st.Committed || st.Snapshot != 2 || ac.Snapshot != 2 || snap != 2 || len(ls) != 10 {
		t.Fatalf("stats committed %v snapshot %d, error's snapshot %d; dataset at %d with %d leases; want snapshot 2 with 10",
			st.Committed, st.Snapshot, ac.Snapshot, snap, len(ls))
	}
	jobs := readJobs(t, o.Output)
	if len(jobs) != 10 || st.Planned != 10 || st.LeaseUntil.IsZero() {
		t.Fatalf("jobs file holds %d jobs, %d planned until %v; want the 10 leased", len(jobs), st.Planned, st.LeaseUntil)
	}
	for _, j := range jobs {
		if l := ls[j.InfoHash]; l.LeaseID != j.LeaseID || time.UnixMilli(l.LeaseUntil).UTC() != st.LeaseUntil {
			t.Fatalf("job %x has lease %s, the dataset %s", j.InfoHash[:1], j.LeaseID, l.LeaseID)
		}
	}
}
