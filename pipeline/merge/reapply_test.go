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
//     fetch host's clock is behind) came between (since merge keeps
//     last_attempt the latest, the rows are stale as well: see
//     TestResentUnleasedRowsCountOnce);
//   - the rows are dated past the clock, read as the run's clock (see
//     FutureSkew), and the file comes again at a later clock: nothing in
//     the state tells them from new rows.
//
// Merged again, the file must be skipped as applied: every state row
// (attempts, backoff, next_retry, seen_count...) and every peer penalty
// as before. With the ledger check off (pendingInputs keeping every
// input), the rows dated past the clock counted again (attempts 1 → 2,
// the penalty escalated), as did the first case's before last_attempt
// was kept the latest (attempts 2 → 3).
func TestLedgerStopsAReappliedInput(t *testing.T) {
	tests := []struct {
		name string
		// between runs what follows the file's merge at t0+hour, and
		// returns the clock the file is merged again at.
		between func(t *testing.T, dir string, h schema.Hash) int64
		at      int64 // the file's attempted_at
		unknown bool  // the state lacks the hash (merge adds it)
	}{
		{"a leased attempt dated before the file's", earlierLeasedAttempt, t0 + 30*minute, false},
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
			file := writeResults(t, []schema.Result{unleasedFailure(h, tt.at)})
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

// TestResentUnleasedRowsCountOnce: an unleased result (lease_id null)
// applied, then a leased attempt of the hash dated before it (its fetch
// host's clock is behind), then the unleased rows again in another input
// (other bytes, which the ledger does not know: here an Arrow stream on
// stdin, as a cut stream sent again whole or a file rewritten would be):
// the rows are stale, and the state and the peer penalties stay as they
// were. The leased attempt used to set last_attempt back to its own time,
// and the rows sent again then counted a second time (attempts 2 → 3,
// backoff_step 2 → 3).
func TestResentUnleasedRowsCountOnce(t *testing.T) {
	h, other := hashAt(0x52, 1), hashAt(0x53, 1)
	dir := makeDataset(t, []schema.State{newHash(other, t0), newHash(h, t0)})
	rows := []schema.Result{unleasedFailure(h, t0+30*minute)}
	if st := runMerge(t, dir, t0+hour, writeResults(t, rows)); st.Applied != 1 {
		t.Fatalf("the unleased result: %+v; want it applied", st)
	}
	again := earlierLeasedAttempt(t, dir, h)
	before, penalties := stateOf(t, dir), penaltiesOf(t, dir)
	if got := before[h]; got.Attempts != 2 || got.LastFailure != schema.OutcomeNoPeers {
		t.Fatalf("after both attempts: attempts %d, last_failure %s; want 2, no_peers (the last applied)", got.Attempts, got.LastFailure)
	} else if got.LastAttempt != t0+30*minute {
		t.Errorf("after both attempts: last_attempt %v, want %v (the latest)", tm(got.LastAttempt), tm(t0+30*minute))
	}
	st, err := mergeStdin(dir, again, resultStream(t, rows))
	if err != nil {
		t.Fatal(err)
	}
	if st.InputsSkipped != 0 || st.Results != 1 || st.StaleFailures != 1 || st.Applied != 0 {
		t.Errorf("the rows again in other bytes: %+v; want them read and ignored as stale", st)
	}
	if after := stateOf(t, dir); !reflect.DeepEqual(after, before) {
		t.Errorf("the rows again changed the state:\n%+v\n→\n%+v", before[h], after[h])
	}
	if got := penaltiesOf(t, dir); !reflect.DeepEqual(got, penalties) {
		t.Errorf("the rows again changed the peer penalties: %+v → %+v", penalties, got)
	}
}

// unleasedFailure is an unleased connect_failed result of h at at, its
// one peer failing.
func unleasedFailure(h schema.Hash, at int64) schema.Result {
	return schema.Result{InfoHash: h, HashType: schema.HashV1, Attempt: 1, AttemptedAt: at,
		Outcome: schema.OutcomeConnectFailed, PeersFound: 1, PeersTried: 1,
		PeerFailures: []schema.PeerFailure{{Addr: "127.0.0.1:7002", Class: schema.OutcomeConnectFailed, At: at}}}
}

// earlierLeasedAttempt plans h at t0+2h and merges its leased no_peers
// failure, dated t0+10m (before the unleased result at t0+30m the tests
// merged first: its fetch host's clock is behind), at t0+3h. It returns
// the clock to merge at next.
func earlierLeasedAttempt(t *testing.T, dir string, h schema.Hash) int64 {
	t.Helper()
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
