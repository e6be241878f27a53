package merge

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestResultsOfLeasesACrashUndid: plan-retries delivers its jobs even
// when the commit of their leases is not durable (see plan's
// TestJobsArePublishedAfterACommitNotDurable). Here the crash such a
// commit allows happens while fetch works on the jobs: CURRENT names the
// snapshot before the leases again. The results still merge: the ok ones
// are stored (late), the failures ignored (late) rather than counted
// against hashes no lease holds; those hashes are planned again, under a
// new lease, and their next failures count once. Nothing is lost,
// nothing counted twice, and the late results sent again change nothing
// (their file is in the ledger; copied elsewhere, they are late still).
func TestResultsOfLeasesACrashUndid(t *testing.T) {
	infoA, a := torrentInfo("a")
	infoB, b := torrentInfo("b")
	c, d := hashAt(0x40, 1), hashAt(0xc0, 2)
	dir := makeDataset(t, []schema.State{newHash(a, t0), newHash(b, t0), newHash(c, t0), newHash(d, t0)})
	current := filepath.Join(dir, "CURRENT")
	before, err := os.ReadFile(current)
	if err != nil {
		t.Fatal(err)
	}
	jobs := planJobs(t, dir, t0, 10)
	if len(jobs) != 4 {
		t.Fatalf("planned %d jobs, want 4", len(jobs))
	}
	// The crash: the rename of CURRENT onto the leases' snapshot is lost.
	if err := os.WriteFile(current, before, 0o644); err != nil {
		t.Fatal(err)
	}
	info := map[schema.Hash][]byte{a: infoA, b: infoB}
	var late []schema.Result
	for _, j := range jobs {
		if i, ok := info[j.InfoHash]; ok {
			late = append(late, success(j, i, t0+minute))
		} else {
			late = append(late, failure(j, schema.OutcomeNoPeers, t0+minute))
		}
	}
	st := runMerge(t, dir, t0+2*minute, writeResults(t, late))
	if st.LateStored != 2 || st.LateFailures != 2 || st.Stored+st.Applied != 0 {
		t.Fatalf("merge: %d ok stored late, %d failures ignored as late, %d stored, %d applied; want 2, 2, 0, 0",
			st.LateStored, st.LateFailures, st.Stored, st.Applied)
	}
	again := planJobs(t, dir, t0+3*minute, 10)
	if len(again) != 2 || again[0].LeaseID == jobs[0].LeaseID {
		t.Fatalf("planned again %d jobs (lease %s, the lost one %s), want the 2 failed under a new lease",
			len(again), again[0].LeaseID, jobs[0].LeaseID)
	}
	var next []schema.Result
	for _, j := range again {
		if j.InfoHash != c && j.InfoHash != d {
			t.Fatalf("planned again %x, fetched already", j.InfoHash[:2])
		}
		next = append(next, failure(j, schema.OutcomeNoPeers, t0+4*minute))
	}
	// The late results come again: in their file, applied already, and
	// copied among the new ones.
	lateFile := writeResults(t, late)
	st = runMerge(t, dir, t0+5*minute, lateFile, writeResults(t, append(next, late...)))
	if st.InputsSkipped != 1 || st.Applied != 2 || st.LateFailures != 2 || st.DuplicateOK != 2 {
		t.Fatalf("merge: %d inputs skipped, %d failures applied, %d ignored as late, %d ok already fetched; want 1, 2, 2, 2",
			st.InputsSkipped, st.Applied, st.LateFailures, st.DuplicateOK)
	}
	state := stateOf(t, dir)
	for h, want := range map[schema.Hash]struct {
		status   string
		attempts int32
	}{a: {schema.StatusFetched, 1}, b: {schema.StatusFetched, 1}, c: {schema.StatusFailed, 1}, d: {schema.StatusFailed, 1}} {
		if s := state[h]; s.MetadataStatus != want.status || s.Attempts != want.attempts {
			t.Errorf("%x: %s after %d attempts, want %s after %d", h[:2], s.MetadataStatus, s.Attempts, want.status, want.attempts)
		}
	}
}
