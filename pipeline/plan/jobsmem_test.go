package plan

import (
	"context"
	"runtime"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/pipeline/schedule"
)

// plannedHeap plans limit jobs of dir and returns the bytes of live heap
// (after a collection) that the planned jobs and their lease table hold
// until they are written and committed.
func plannedHeap(t *testing.T, dir string, limit int) uint64 {
	t.Helper()
	d, err := dataset.Open(context.Background(), dir, dataset.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Abort()
	p := schedule.Default()
	o := DefaultOptions()
	o.Limit, o.Workers = limit, 1
	share, lease, seed, coldBudget := passSettings(p, o)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var st Stats
	jobs, table, _, err := planOnce(context.Background(), d, tx, p, schedule.Blocklist{}, ms(t0)+30*day, seed, o, share,
		lease, coldBudget, &unpublished{}, &replaced{}, &st)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if st.Planned != limit {
		t.Fatalf("planned %d jobs, want %d", st.Planned, limit)
	}
	runtime.KeepAlive(jobs)
	runtime.KeepAlive(table)
	return after.HeapAlloc - min(before.HeapAlloc, after.HeapAlloc)
}

// TestPlannedJobsMemory checks that the jobs a pass planned are held as
// their candidates until they are written, not also (or instead) as a
// slice of schema.Job (144 bytes a job, besides its lists; 152 bytes of
// heap a job in all when they were): at most 135 bytes of heap per job
// beyond what a small limit holds, for the candidates (72 bytes, in
// pool arrays grown by doubling) and the lease table's index by hash.
// The bytes written are pinned by TestPlanBytesMatchGolden.
func TestPlannedJobsMemory(t *testing.T) {
	const n, limit, small = 60000, 20000, 10
	dir := manyDue(t, n)
	base := plannedHeap(t, dir, small)
	total := plannedHeap(t, dir, limit)
	perJob := (float64(total) - float64(base)) / float64(limit-small)
	t.Logf("%.0f bytes of heap per job planned", perJob)
	if perJob > 135 {
		t.Errorf("the planned jobs held %.0f bytes each (%d at --limit %d, %d at --limit %d), want at most 135",
			perJob, total, limit, base, small)
	}
}
