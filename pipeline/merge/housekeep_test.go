package merge

import (
	"bytes"
	"maps"
	"path/filepath"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/leases"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestIdleMergeHousekeeps: a merge whose inputs hold no result row prunes
// what a merge with rows would (a lease ended over leases.Grace ago, a
// peer penalty past the policy's forget time) in a commit of its own that
// records nothing in the ledger; with nothing to prune it stays a no-op
// (no snapshot), before and after.
func TestIdleMergeHousekeeps(t *testing.T) {
	var stream bytes.Buffer // an Arrow stream of results with no batch
	if err := rowio.NewArrowWriter[schema.Result]("stdout", &stream).Close(); err != nil {
		t.Fatal(err)
	}
	forget := int64(schedule.Default().PeerPenalty.Forget) / 1e6
	for _, tc := range []struct {
		name   string
		setup  func(t *testing.T, dir string) // at t0
		early  int64                          // an idle merge then has nothing to prune
		late   int64                          // and then has
		leases int                            // pruned late
		peers  int
	}{
		{"ended lease", func(t *testing.T, dir string) { planJobs(t, dir, t0, 10) },
			t0 + leases.Grace, t0 + 3*hour + leases.Grace, 1, 0},
		{"forgotten penalty", func(t *testing.T, dir string) {
			j := planJobs(t, dir, t0, 10)[0]
			runMerge(t, dir, t0+hour, writeResults(t, []schema.Result{
				failure(j, schema.OutcomeConnectFailed, t0+minute, pfail("6001", schema.OutcomeConnectFailed, t0+minute))}))
		}, t0 + forget, t0 + hour + forget, 0, 1},
	} {
		for _, in := range []string{"parquet", "stdin"} {
			t.Run(tc.name+"/"+in, func(t *testing.T) {
				dir := makeDataset(t, []schema.State{newHash(hashAt(1, 1), t0)})
				tc.setup(t, dir)
				input := "-"
				if in == "parquet" {
					input = writeResults(t, nil)
				}
				idle := func(now int64) Stats {
					t.Helper()
					st := runMergeStdin(t, dir, now, input, stream.Bytes())
					if st.Results != 0 || st.InputsSkipped != 0 {
						t.Errorf("stats %+v: want no results, the input not in the ledger", st)
					}
					return st
				}
				snap, ledger, totals := datasettest.Snapshot(t, dir), ledgerLen(t, dir), datasettest.Current(t, dir).Totals
				if st := idle(tc.early); st.Committed || datasettest.Snapshot(t, dir) != snap {
					t.Fatalf("nothing to prune yet: committed %+v", st)
				}
				st := idle(tc.late)
				if !st.Committed || st.Snapshot != snap+1 || datasettest.Snapshot(t, dir) != snap+1 {
					t.Fatalf("something to prune: stats %+v, snapshot %d; want snapshot %d", st, datasettest.Snapshot(t, dir), snap+1)
				}
				if st.LeasesPruned != tc.leases || st.PeersForgotten != tc.peers {
					t.Errorf("pruned %d leases, %d penalties; want %d, %d", st.LeasesPruned, st.PeersForgotten, tc.leases, tc.peers)
				}
				if n := len(readTable[schema.Lease](t, dir, dataset.TableLeases)); n != 0 {
					t.Errorf("%d leases left", n)
				}
				if n := len(readTable[schema.PeerPenalty](t, dir, dataset.TablePeers)); n != 0 {
					t.Errorf("%d penalties left", n)
				}
				if left, _ := filepath.Glob(filepath.Join(dir, inboxDir, "*")); len(left) > 0 {
					t.Errorf("left in the inbox: %v", left)
				}
				if got := ledgerLen(t, dir); got != ledger {
					t.Errorf("ledger %d entries, was %d: the empty input was recorded", got, ledger)
				}
				if got := datasettest.Current(t, dir).Totals; !maps.Equal(got, totals) {
					t.Errorf("totals %v, were %v: housekeeping counted as applied work", got, totals)
				}
				if st := idle(tc.late + hour); st.Committed || datasettest.Snapshot(t, dir) != snap+1 {
					t.Errorf("pruned already: committed again %+v", st)
				}
			})
		}
	}
}

// ledgerLen is the number of entries in the dataset's ledger.
func ledgerLen(t *testing.T, dir string) int64 {
	t.Helper()
	return datasettest.Current(t, dir).LedgerLen()
}
