package merge

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestCountersOfInputsAppliedByAnother: a merge whose commit another
// merge of the same input overtook finds, on its second try, the input
// applied: it commits nothing and counts none of its rows (results,
// failures, releases), only the input as already applied. It reported
// the counters of its discarded first try, so the rows counted twice:
// in the run that applied them and in this one.
func TestCountersOfInputsAppliedByAnother(t *testing.T) {
	a, b := hashAt(0x30, 1), hashAt(0x31, 2)
	dir := makeDataset(t, []schema.State{newHash(a, t0), newHash(b, t0)})
	jobs := planJobs(t, dir, t0, 2)
	rel := jobs[1]
	in := writeResults(t, []schema.Result{
		failure(jobs[0], schema.OutcomeNoPeers, t0+minute),
		{InfoHash: rel.InfoHash, HashType: rel.HashType, Attempt: rel.Attempt, LeaseID: rel.LeaseID, AttemptedAt: t0 + minute, Outcome: schema.OutcomeReleased},
	})
	var other Stats
	testBeforeCommit = func() {
		testBeforeCommit = nil
		other = runMerge(t, dir, t0+2*minute, in) // commits first
	}
	defer func() { testBeforeCommit = nil }()
	st := runMerge(t, dir, t0+2*minute, in)
	if other.Applied != 1 || other.Released != 1 {
		t.Fatalf("the merge that overtook: %d failures applied, %d released rows; want 1, 1", other.Applied, other.Released)
	}
	if st.CommitConflicts != 1 || st.InputsSkipped != 1 || st.Results != 0 || st.Applied != 0 || st.Released != 0 ||
		st.LateFailures != 0 || st.StaleReleases != 0 || st.LeasesReleased != 0 || st.Partitions != 0 {
		t.Errorf("the overtaken merge: %+v; want 1 conflict, 1 input already applied and no row counted", st)
	}
}

// TestUnionCountersOfAUnionAppliedByAnother: merge --from whose commit
// another union of the same dataset overtook finds the union applied on
// its second try: already merged, with nothing counted.
func TestUnionCountersOfAUnionAppliedByAnother(t *testing.T) {
	dir := makeDataset(t, []schema.State{newHash(hashAt(0x30, 1), t0)})
	from := makeDataset(t, []schema.State{newHash(hashAt(0x30, 1), t0), newHash(hashAt(0x40, 2), t0)})
	var other Stats
	testBeforeCommit = func() {
		testBeforeCommit = nil
		o := DefaultOptions()
		o.Data, o.From, o.Now = dir, from, tm(t0+minute)
		var err error
		if other, err = Run(context.Background(), o); err != nil { // commits first
			t.Errorf("merge --from: %v", err)
		}
	}
	defer func() { testBeforeCommit = nil }()
	st := runFromT(t, dir, from, t0+minute)
	if u := other.Union; u.HashesAdded != 1 || u.HashesCombined != 1 {
		t.Fatalf("the union that overtook: %+v; want 1 hash added, 1 combined", u)
	}
	if u := st.Union; st.CommitConflicts != 1 || !u.AlreadyMerged || u.HashesAdded != 0 || u.HashesCombined != 0 ||
		u.Partitions != 0 || u.LedgerEntries != 0 {
		t.Errorf("the overtaken union: %d conflicts, %+v; want 1, already merged and nothing counted", st.CommitConflicts, *u)
	}
}

// TestResentRowsCountedOncePerRead: what the counters count when results
// come again. The same bytes (the same file again, or its copy in the same
// run) are an input already applied: skipped, none of its rows read nor
// counted. The same rows in another input (other bytes: a cut stream sent
// again whole, a file rewritten) are read, and each gets one verdict as
// any row does: a failure or released row whose lease its first copy
// ended is ignored (late_failures_ignored, stale_releases_ignored) and
// changes nothing. Every row read is counted exactly once.
func TestResentRowsCountedOncePerRead(t *testing.T) {
	a, b := hashAt(0x30, 1), hashAt(0x31, 2)
	dir := makeDataset(t, []schema.State{newHash(a, t0), newHash(b, t0)})
	jobs := planJobs(t, dir, t0, 2)
	rel := jobs[1]
	rows := []schema.Result{
		failure(jobs[0], schema.OutcomeNoPeers, t0+minute),
		{InfoHash: rel.InfoHash, HashType: rel.HashType, Attempt: rel.Attempt, LeaseID: rel.LeaseID, AttemptedAt: t0 + minute, Outcome: schema.OutcomeReleased},
	}
	in := writeResults(t, rows)
	copied := filepath.Join(t.TempDir(), "copy.parquet")
	b1, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copied, b1, 0o644); err != nil {
		t.Fatal(err)
	}
	verdicts := func(st Stats) int64 {
		return st.Stored + st.LateStored + st.DuplicateOK + st.Applied + st.LateFailures + st.StaleFailures +
			st.AfterFetched + st.Released + st.StaleReleases
	}
	st := runMerge(t, dir, t0+2*minute, in, copied)
	if st.Inputs != 2 || st.InputsSkipped != 1 || st.Results != 2 || st.Applied != 1 || st.Released != 1 ||
		st.LateFailures != 0 || st.StaleReleases != 0 || verdicts(st) != st.Results {
		t.Fatalf("a file and its copy in one run: %+v; want the copy skipped, 1 failure applied, 1 released row", st)
	}
	before := stateOf(t, dir)
	for name, inputs := range map[string][]string{"the same file again": {in}, "its copy": {copied}} {
		st := runMerge(t, dir, t0+3*minute, inputs...)
		if st.InputsSkipped != 1 || st.Results != 0 || verdicts(st) != 0 {
			t.Errorf("%s: %+v; want it skipped, nothing counted", name, st)
		}
	}
	st = runMerge(t, dir, t0+4*minute, writeResults(t, []schema.Result{rows[1], rows[0]}))
	if st.InputsSkipped != 0 || st.Results != 2 || st.LateFailures != 1 || st.StaleReleases != 1 || st.Applied+st.Released != 0 ||
		st.LeasesReleased != 0 || verdicts(st) != st.Results {
		t.Errorf("the same rows in other bytes: %+v; want both read, the failure ignored as late, the release as stale", st)
	}
	if after := stateOf(t, dir); after[a].Attempts != before[a].Attempts || after[a].NextRetry != before[a].NextRetry || !reflect.DeepEqual(after[b], before[b]) {
		t.Errorf("the rows sent again changed the state: %+v → %+v", before, after)
	}
}
