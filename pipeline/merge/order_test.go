package merge

import (
	"runtime"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestSortResultsAllocates: sortResults sorts in place, allocating its
// keys (40 bytes a result) and no copy of the rows (368 bytes a result):
// a sorted copy held beside the rows doubled merge's peak at 1M results.
// It counts the bytes allocated (runtime.MemStats.TotalAlloc), not the
// time taken; the order itself is pinned by TestMergeBytesMatchGolden.
func TestSortResultsAllocates(t *testing.T) {
	const n = 20_000
	rs := make([]result, n)
	for i := range rs {
		rs[i].InfoHash = hashAt(byte(i*7), uint64(n-i))
		rs[i].Outcome = schema.OutcomeNoPeers
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	sortResults(rs)
	runtime.ReadMemStats(&after)
	per := (after.TotalAlloc - before.TotalAlloc) / n
	t.Logf("%d bytes allocated a result", per)
	if per > 100 {
		t.Errorf("sortResults allocated %d bytes a result, want at most 100 (its keys, not a copy of the rows)", per)
	}
	for i := 1; i < n; i++ {
		if hashCmp(rs[i-1].InfoHash, rs[i].InfoHash) > 0 {
			t.Fatalf("row %d (%x) sorts after row %d (%x)", i-1, rs[i-1].InfoHash, i, rs[i].InfoHash)
		}
	}
}
