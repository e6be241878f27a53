package plan

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/leases"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// manyDue returns a dataset of n due hashes over 32 partitions: half
// new, half retried, one in eight with a peer.
func manyDue(t testing.TB, n int) string {
	t.Helper()
	var states []schema.State
	now := ms(t0) + 30*day
	for i := range n {
		h := hashAt(byte(i%32), uint64(i))
		st := newHash(h, ms(t0)+int64(i%1000)*minute)
		if i%2 == 1 {
			st.MetadataStatus, st.Attempts, st.LastAttempt, st.NextRetry = schema.StatusFailed, 1, now-day, now-hour
		}
		if i%8 == 0 {
			st.Peers = []string{fmt.Sprintf("10.0.0.%d:6881", i%250)}
		}
		states = append(states, st)
	}
	return makeDataset(t, states, nil)
}

// scanHeap scans dir for limit jobs with workers and returns the bytes
// of live heap its result holds (after a collection) and the candidates
// it kept.
func scanHeap(t testing.TB, dir string, limit, workers int) (uint64, int) {
	t.Helper()
	d, m := datasettest.OpenCurrent(t, dir)
	defer d.Close()
	p := schedule.Default()
	s := &scanner{d: d, m: m, p: p, leases: leases.Set{}, now: ms(t0) + 30*day, limit: limit,
		share: p.Plan.NewShare, coldBudget: coldReserve(limit, p.Plan.ColdShare)}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ps, _, err := s.scan(context.Background(), workers, nil)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	kept := 0
	for i := range ps.k {
		kept += ps.k[i].Len()
	}
	runtime.KeepAlive(ps)
	return after.HeapAlloc - min(before.HeapAlloc, after.HeapAlloc), kept
}

// TestScanMemoryPerJob checks that a scan's memory grows with --limit
// by a small constant per job, however many workers share it: at most
// limit candidates kept in all (not limit per pool and per worker), and
// at most 300 bytes of heap per job beyond what a small limit holds.
func TestScanMemoryPerJob(t *testing.T) {
	const n, limit, small = 60000, 20000, 10
	dir := manyDue(t, n)
	for _, workers := range []int{1, 3} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			base, _ := scanHeap(t, dir, small, workers)
			total, kept := scanHeap(t, dir, limit, workers)
			if kept > limit {
				t.Errorf("the scan kept %d candidates for --limit %d", kept, limit)
			}
			perJob := (float64(total) - float64(base)) / float64(limit-small)
			t.Logf("%d workers: %.0f bytes of heap per job; %d candidates kept", workers, perJob, kept)
			if perJob > 300 {
				t.Errorf("the scan held %.0f bytes per job (%d at --limit %d, %d at --limit %d), want at most 300",
					perJob, total, limit, base, small)
			}
		})
	}
}

// BenchmarkScanMemory reports the heap a scan holds per job at a large
// --limit, beyond what a small one holds.
func BenchmarkScanMemory(b *testing.B) {
	const n, limit, small = 60000, 20000, 10
	dir := manyDue(b, n)
	for b.Loop() {
		base, _ := scanHeap(b, dir, small, 2)
		total, _ := scanHeap(b, dir, limit, 2)
		b.ReportMetric((float64(total)-float64(base))/float64(limit-small), "B/job")
	}
}
