package merge

import (
	"reflect"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// released is the released row fetch writes for job j at at.
func released(j schema.Job, at int64) schema.Result {
	return schema.Result{InfoHash: j.InfoHash, HashType: j.HashType, Attempt: j.Attempt, LeaseID: j.LeaseID,
		AttemptedAt: at, Outcome: schema.OutcomeReleased, Detail: "not started: run deadline reached"}
}

// leaseOf returns h's row of the leases table, if it has one.
func leaseOf(t *testing.T, dir string, h schema.Hash) (schema.Lease, bool) {
	t.Helper()
	for _, l := range readTable[schema.Lease](t, dir, dataset.TableLeases) {
		if l.InfoHash == h {
			return l, true
		}
	}
	return schema.Lease{}, false
}

// worn is a hash with a history: failed six times, unseen for 100 days
// (past the default archive threshold), an avoid_peers endpoint with no
// live penalty (a merge that touched it would prune it), due at now.
func worn(h schema.Hash, now int64) schema.State {
	st := newHash(h, now-200*day)
	p := schedule.Default()
	for i := range 6 {
		if err := schedule.ApplyFailure(p, &st, schema.OutcomeNoPeers, now-20*day+int64(i)*day, false); err != nil {
			panic(err)
		}
	}
	st.LastSeen, st.NextRetry = now-100*day, now-hour
	st.AvoidPeers = []string{"127.0.0.1:7002"}
	return st
}

// TestMergeReleased: a released row ends its lease and changes nothing
// else (the whole state row, the peers table); the hash can be planned
// again at once; merging the file again changes nothing.
func TestMergeReleased(t *testing.T) {
	now := t0 + 300*day
	h := hashAt(0x50, 1)
	dir := makeDataset(t, []schema.State{worn(h, now)})
	jobs := planJobs(t, dir, now, 10)
	if len(jobs) != 1 || jobs[0].InfoHash != h {
		t.Fatalf("planned %+v, want the one hash", jobs)
	}
	j := jobs[0]
	before, peersBefore := stateOf(t, dir)[h], readTable[schema.PeerPenalty](t, dir, dataset.TablePeers)
	if _, ok := leaseOf(t, dir, h); !ok {
		t.Fatal("no lease after plan-retries")
	}
	rel := released(j, now+minute)
	// Peer data on a released row is no failure of anybody's: ignored.
	rel.PeerFailures = []schema.PeerFailure{{Addr: "127.0.0.1:7003", Class: schema.OutcomeConnectFailed, At: now + minute}}
	path := writeResults(t, []schema.Result{rel})
	st := runMerge(t, dir, now+2*minute, path)
	if st.Released != 1 || st.LeasesReleased != 1 || st.StaleReleases != 0 || st.Applied != 0 || st.Stored != 0 ||
		st.PeerPenalties != 0 || st.Archived != 0 || st.UnknownHashes != 0 {
		t.Fatalf("stats %+v", st)
	}
	if _, ok := leaseOf(t, dir, h); ok {
		t.Error("the lease is still there after its release")
	}
	if after := stateOf(t, dir)[h]; !reflect.DeepEqual(after, before) {
		t.Errorf("state row changed by a release:\n before %+v\n after  %+v", before, after)
	}
	if peers := readTable[schema.PeerPenalty](t, dir, dataset.TablePeers); !reflect.DeepEqual(peers, peersBefore) {
		t.Errorf("peers changed by a release: %+v → %+v", peersBefore, peers)
	}
	again := planJobs(t, dir, now+3*minute, 10) // the released lease would have run 2h
	if len(again) != 1 || again[0].InfoHash != h || again[0].LeaseID == j.LeaseID || again[0].Attempt != j.Attempt {
		t.Fatalf("after the release, planned %+v, want %x again under a new lease, same attempt", again, h)
	}
	st = runMerge(t, dir, now+4*minute, path)
	if st.InputsSkipped != 1 || st.Released != 0 {
		t.Fatalf("the same file again: %+v", st)
	}
	if l, ok := leaseOf(t, dir, h); !ok || l.LeaseID != again[0].LeaseID {
		t.Errorf("the new lease after merging the release again: %+v, %v", l, ok)
	}
}

// TestMergeReleaseStale: a released row whose lease is not the hash's
// lease changes nothing: not the lease, not the state.
func TestMergeReleaseStale(t *testing.T) {
	h := hashAt(0x51, 1)
	tests := []struct {
		name string
		row  func(old, cur schema.Job) schema.Result
	}{
		{"older lease", func(old, _ schema.Job) schema.Result { return released(old, t0+3*hour+minute) }},
		{"no lease_id", func(_, cur schema.Job) schema.Result {
			r := released(cur, t0+3*hour+minute)
			r.LeaseID = ""
			return r
		}},
		{"another lease_id", func(_, cur schema.Job) schema.Result {
			r := released(cur, t0+3*hour+minute)
			r.LeaseID += "x"
			return r
		}},
		{"unknown hash", func(_, cur schema.Job) schema.Result {
			r := released(cur, t0+3*hour+minute)
			r.InfoHash = hashAt(0x51, 2)
			return r
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := makeDataset(t, []schema.State{newHash(h, t0)})
			old := planJobs(t, dir, t0, 1)[0]
			cur := planJobs(t, dir, t0+3*hour, 1)[0] // the first lease ran out unanswered
			if cur.LeaseID == old.LeaseID {
				t.Fatal("planned again under the same lease")
			}
			before := stateOf(t, dir)
			st := runMerge(t, dir, t0+3*hour+2*minute, writeResults(t, []schema.Result{tt.row(old, cur)}))
			if st.StaleReleases != 1 || st.Released != 0 || st.LeasesReleased != 0 || st.UnknownHashes != 0 {
				t.Fatalf("stats %+v", st)
			}
			if l, ok := leaseOf(t, dir, h); !ok || l.LeaseID != cur.LeaseID {
				t.Errorf("lease %+v (%v), want %q kept", l, ok, cur.LeaseID)
			}
			if after := stateOf(t, dir); !reflect.DeepEqual(after, before) {
				t.Errorf("state changed:\n before %+v\n after  %+v", before, after)
			}
			if n := len(planJobs(t, dir, t0+3*hour+3*minute, 1)); n != 0 {
				t.Errorf("planned %d jobs while the current lease is live", n)
			}
		})
	}
}

// TestMergeReleaseAndAttempt: a released row and an attempt under the
// same lease in one input, in either order and at either time: the
// attempt counts as if alone, and the release is ignored.
func TestMergeReleaseAndAttempt(t *testing.T) {
	info, h := torrentInfo("released and fetched")
	tests := []struct {
		name         string
		ok           bool
		releaseFirst bool  // row order in the input
		releaseAt    int64 // relative to the attempt
	}{
		{"failure, release before it", false, true, -minute},
		{"failure, release after it", false, false, minute},
		{"failure, later release first", false, true, minute},
		{"failure, earlier release last", false, false, -minute},
		{"failure, same time", false, true, 0},
		{"ok, release before it", true, true, -minute},
		{"ok, earlier release last", true, false, -minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := makeDataset(t, []schema.State{newHash(h, t0)})
			j := planJobs(t, dir, t0, 1)[0]
			at := t0 + 10*minute
			attempt := failure(j, schema.OutcomeConnectFailed, at,
				schema.PeerFailure{Addr: "127.0.0.1:7001", Class: schema.OutcomeConnectFailed, At: at})
			if tt.ok {
				attempt = success(j, info, at)
			}
			rows := []schema.Result{attempt, released(j, at+tt.releaseAt)}
			if tt.releaseFirst {
				rows[0], rows[1] = rows[1], rows[0]
			}
			st := runMerge(t, dir, at+2*minute, writeResults(t, rows)) // connect_failed's penalty still runs
			if st.Released != 0 || st.StaleReleases != 1 || st.LeasesReleased != 1 || st.Applied+st.Stored != 1 || st.LateFailures != 0 {
				t.Fatalf("stats %+v", st)
			}
			got := stateOf(t, dir)[h]
			switch {
			case tt.ok && (got.MetadataStatus != schema.StatusFetched || got.Attempts != 1):
				t.Errorf("state %+v, want fetched", got)
			case !tt.ok && (got.MetadataStatus != schema.StatusFailed || got.Attempts != 1 || got.LastAttempt != at ||
				got.LastFailure != schema.OutcomeConnectFailed || got.NextRetry <= at || len(got.AvoidPeers) != 1):
				t.Errorf("state %+v, want the failure applied", got)
			}
			if _, ok := leaseOf(t, dir, h); ok {
				t.Error("lease left after its attempt")
			}
		})
	}
}
