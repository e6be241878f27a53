package merge

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// TestForeignResultsRefused: the results of jobs planned for another
// dataset are refused whole (exit 2, naming the file; nothing committed).
// Their lease_id matched no lease here, so they were counted as late and
// ignored, while their unknown hashes were added and their peers
// penalised; and a lease ID that happened to be the same (same seed,
// --now and snapshot) applied them. A dataset's own results, those of an
// older jobs file (a lease ID naming no dataset) and unleased ones still
// merge.
func TestForeignResultsRefused(t *testing.T) {
	now := t0 + 300*day
	h := hashAt(0x50, 1)
	for _, tc := range []struct {
		name    string
		leaseOf func(t *testing.T, own, other string) string // the result's lease_id, given both datasets
		refused bool
	}{
		{"another dataset's jobs", func(t *testing.T, own, other string) string {
			return planJobs(t, other, now, 10)[0].LeaseID
		}, true},
		{"another dataset's jobs, same lease otherwise", func(t *testing.T, own, other string) string {
			mine, theirs := planJobs(t, own, now, 10)[0].LeaseID, planJobs(t, other, now, 10)[0].LeaseID
			if mine[:17] != theirs[:17] {
				t.Fatalf("lease IDs %s and %s: want the same pass (same seed, time and snapshot)", mine, theirs)
			}
			return theirs
		}, true},
		{"own jobs", func(t *testing.T, own, other string) string {
			return planJobs(t, own, now, 10)[0].LeaseID
		}, false},
		{"older jobs file", func(t *testing.T, own, other string) string {
			addTables(t, own, nil, nil, []schema.Lease{{InfoHash: h, LeaseID: "L0123456789abcdef", LeaseUntil: now + hour,
				Attempt: 7, Reason: schema.ReasonRetry, PlannedAt: now - hour}}, nil)
			return "L0123456789abcdef"
		}, false},
		{"no lease (fetch of a hash list)", func(t *testing.T, own, other string) string { return "" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			own, other := makeDataset(t, []schema.State{worn(h, now)}), makeDataset(t, []schema.State{worn(h, now)})
			id := tc.leaseOf(t, own, other)
			before := datasettest.Snapshot(t, own)
			j := schema.Job{InfoHash: h, HashType: schema.HashV1, Attempt: 7, LeaseID: id}
			in := writeResults(t, []schema.Result{failure(j, schema.OutcomeNoPeers, now+minute)})
			st, err := tryMerge(own, now+2*minute, in)
			if !tc.refused {
				if err != nil || st.Applied != 1 {
					t.Fatalf("merge: %v, %d failures applied; want it applied", err, st.Applied)
				}
				return
			}
			if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), filepath.Base(in)) ||
				!strings.Contains(err.Error(), "another dataset's jobs") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("merge of another dataset's results: %v (exit %d); want one line naming %s, exit 2", err, exitcode.Of(err), in)
			}
			if after := datasettest.Snapshot(t, own); after != before {
				t.Fatalf("refused merge committed snapshot %d (was %d)", after, before)
			}
		})
	}
}
