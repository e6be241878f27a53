package merge

import (
	"path/filepath"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/leases"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestAppliedMergeHousekeeps: a merge whose inputs were all applied
// before does the housekeeping a merge of inputs with no result row does
// (TestIdleMergeHousekeeps): with nothing to prune it commits nothing;
// once a lease ended over leases.Grace ago and a peer penalty is past the
// policy's forget time, it prunes both in a commit of its own that adds
// nothing to the ledger. It used to commit nothing, whatever was due.
func TestAppliedMergeHousekeeps(t *testing.T) {
	forget := int64(schedule.Default().PeerPenalty.Forget) / 1e6
	for _, in := range []string{"parquet", "stdin"} {
		for _, tc := range []struct {
			name           string
			now            int64
			leases, peers  int // pruned
			leasesLeft     int
			penaltiesLeft  int
			committedAgain bool
		}{
			{"nothing to prune", t0 + 2*hour, 0, 0, 1, 1, false},
			{"ended lease and forgotten penalty", t0 + hour + forget + 3*hour + leases.Grace, 1, 1, 0, 0, true},
		} {
			t.Run(in+"/"+tc.name, func(t *testing.T) {
				dir := makeDataset(t, []schema.State{newHash(hashAt(1, 1), t0), newHash(hashAt(2, 1), t0)})
				jobs := planJobs(t, dir, t0, 10)
				if len(jobs) != 2 {
					t.Fatalf("%d jobs, want 2", len(jobs))
				}
				// One job fails at a peer: its lease ends, the peer is
				// penalised; the other job's lease stays.
				rs := []schema.Result{failure(jobs[0], schema.OutcomeConnectFailed, t0+minute,
					pfail("6001", schema.OutcomeConnectFailed, t0+minute))}
				stream := resultStream(t, rs)
				input := "-"
				if in == "parquet" {
					input = writeResults(t, rs)
				}
				merge := func(now int64) Stats {
					t.Helper()
					return runMergeStdin(t, dir, now, input, stream)
				}
				if st := merge(t0 + hour); !st.Committed || st.Results != 1 {
					t.Fatalf("first merge: %+v", st)
				}
				snap, ledger := datasettest.Snapshot(t, dir), ledgerLen(t, dir)
				st := merge(tc.now)
				if st.InputsSkipped != 1 || st.Results != 0 {
					t.Errorf("stats %+v: want the input already applied, no results", st)
				}
				want := snap
				if tc.committedAgain {
					want++
				}
				if st.Committed != tc.committedAgain || datasettest.Snapshot(t, dir) != want || st.Snapshot != want {
					t.Fatalf("committed %v, stats snapshot %d, dataset snapshot %d; want committed %v, snapshot %d",
						st.Committed, st.Snapshot, datasettest.Snapshot(t, dir), tc.committedAgain, want)
				}
				if st.LeasesPruned != tc.leases || st.PeersForgotten != tc.peers {
					t.Errorf("pruned %d leases, %d penalties; want %d, %d", st.LeasesPruned, st.PeersForgotten, tc.leases, tc.peers)
				}
				if n := len(readTable[schema.Lease](t, dir, dataset.TableLeases)); n != tc.leasesLeft {
					t.Errorf("%d leases left, want %d", n, tc.leasesLeft)
				}
				if n := len(readTable[schema.PeerPenalty](t, dir, dataset.TablePeers)); n != tc.penaltiesLeft {
					t.Errorf("%d penalties left, want %d", n, tc.penaltiesLeft)
				}
				if got := ledgerLen(t, dir); got != ledger {
					t.Errorf("ledger %d entries, was %d", got, ledger)
				}
				if left, _ := filepath.Glob(filepath.Join(dir, inboxDir, "*")); len(left) > 0 {
					t.Errorf("left in the inbox: %v", left)
				}
				if st := merge(tc.now + hour); st.Committed || datasettest.Snapshot(t, dir) != want {
					t.Errorf("nothing left to prune: committed again %+v", st)
				}
			})
		}
	}
}
