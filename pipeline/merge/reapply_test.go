package merge

import (
	"reflect"
	"slices"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// TestLedgerStopsAReappliedInput: a results file merged again changes
// nothing, in cases where only the ledger can tell its rows were applied.
// A leased result is spent with its lease and an ok one with the hash
// fetched, so those come back late or duplicate whatever the ledger says
// (which is why a kill test re-sending a pass's results cannot fail on
// it). These rows are unleased (a fetch of a hash list: lease_id null),
// which merge applies when the hash has no lease and attempted_at is after
// its last_attempt, and the state has moved on in a way that keeps them
// looking new:
//
//   - a leased attempt applied after the file but dated before it (its
//     fetch host's clock is behind) set last_attempt back;
//   - the rows are dated past the clock, read as the run's clock (see
//     FutureSkew), and the file comes again at a later clock.
//
// Merged again, the file must be skipped as applied: every state row
// (attempts, backoff, next_retry, seen_count...) and every peer penalty
// as before. With the ledger check off (pendingInputs keeping every
// input), each case counted the rows again: attempts 2 → 3 in the first,
// 1 → 2 and a doubled penalty in the second.
func TestLedgerStopsAReappliedInput(t *testing.T) {
	const peer = "127.0.0.1:7002"
	pf := func(at int64) schema.PeerFailure {
		return schema.PeerFailure{Addr: peer, Class: schema.OutcomeConnectFailed, At: at}
	}
	unleased := func(h schema.Hash, at int64) schema.Result {
		return schema.Result{InfoHash: h, HashType: schema.HashV1, Attempt: 1, AttemptedAt: at,
			Outcome: schema.OutcomeConnectFailed, PeersFound: 1, PeersTried: 1, PeerFailures: []schema.PeerFailure{pf(at)}}
	}
	tests := []struct {
		name string
		// between runs what follows the file's merge at t0+hour, and
		// returns the clock the file is merged again at.
		between func(t *testing.T, dir string, h schema.Hash) int64
		at      int64 // the file's attempted_at
		unknown bool  // the state lacks the hash (merge adds it)
	}{
		{"a leased attempt dated before the file's", func(t *testing.T, dir string, h schema.Hash) int64 {
			jobs := planJobs(t, dir, t0+2*hour, 10)
			k := slices.IndexFunc(jobs, func(j schema.Job) bool { return j.InfoHash == h })
			if k < 0 {
				t.Fatalf("planned %+v, want the hash among them", jobs)
			}
			st := runMerge(t, dir, t0+3*hour, writeResults(t, []schema.Result{failure(jobs[k], schema.OutcomeNoPeers, t0+10*minute)}))
			if st.Applied != 1 {
				t.Fatalf("the leased result: %+v; want it applied", st)
			}
			return t0 + 4*hour
		}, t0 + 30*minute, false},
		{"dated past the clock, merged again later", func(*testing.T, string, schema.Hash) int64 {
			return t0 + 2*day
		}, t0 + 10*day, false},
		{"a hash the state lacked, dated past the clock", func(*testing.T, string, schema.Hash) int64 {
			return t0 + 2*day
		}, t0 + 10*day, true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, other := hashAt(0x50, uint64(i)), hashAt(0x51, uint64(i))
			states := []schema.State{newHash(other, t0)}
			if !tt.unknown {
				states = append(states, newHash(h, t0))
			}
			dir := makeDataset(t, states)
			file := writeResults(t, []schema.Result{unleased(h, tt.at)})
			if st := runMerge(t, dir, t0+hour, file); st.Applied != 1 {
				t.Fatalf("the file's first merge: %+v; want its result applied", st)
			}
			again := tt.between(t, dir, h)
			before, penalties := stateOf(t, dir), penaltiesOf(t, dir)
			st := runMerge(t, dir, again, file)
			if st.InputsSkipped != 1 || st.Results != 0 {
				t.Errorf("merged again: %d inputs skipped, %d results read; want the file skipped, none read", st.InputsSkipped, st.Results)
			}
			after := stateOf(t, dir)
			if !reflect.DeepEqual(after, before) {
				t.Errorf("the file merged again changed the state:\n%+v\n→\n%+v", before[h], after[h])
			}
			if got := penaltiesOf(t, dir); !reflect.DeepEqual(got, penalties) {
				t.Errorf("the file merged again changed the peer penalties: %+v → %+v", penalties, got)
			}
		})
	}
}

// penaltiesOf is the peers table of the dataset at dir, by address.
func penaltiesOf(t *testing.T, dir string) []schema.PeerPenalty {
	t.Helper()
	ps := readTable[schema.PeerPenalty](t, dir, dataset.TablePeers)
	slices.SortFunc(ps, func(a, b schema.PeerPenalty) int {
		switch {
		case a.Addr < b.Addr:
			return -1
		case a.Addr > b.Addr:
			return 1
		}
		return 0
	})
	return ps
}
