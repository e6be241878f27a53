package schedule

import (
	"container/heap"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestDeadPeerDeferralsAndArchival simulates k hashes, never sighted
// again, whose only peer is one dead endpoint, each tried the instant it
// is due for a year under the default policy: the first try that finds
// the endpoint unpenalised fails (connect_failed, counted) and penalises
// it; every other finds it penalised and is deferred (peers_penalised,
// not counted). A deferral or a local error leaves a never-tried hash
// new, so archive.new_unseen moves the hashes still new to the cold tier
// however many deferrals they had. The hashes that failed get about one
// counted attempt per penalty (which grows to peer_penalty.max), so most
// stay below archive.min_attempts; merge archives such a hash when it
// defers it once unseen for archive.unseen (ShouldArchiveDeferred, at
// the deferral's time here), so none stays hot.
func TestDeadPeerDeferralsAndArchival(t *testing.T) {
	p := Default()
	end := t0 + 365*day
	for _, k := range []int{10, 1000} {
		q := stateQueue{}
		for i := range k {
			st := newState(uint64(i + 1))
			st.NextRetry = t0 + int64(i)*1000
			q = append(q, &st)
		}
		heap.Init(&q)
		var pen *schema.PeerPenalty
		deferrals := 0
		for q[0].NextRetry < end {
			st := heap.Pop(&q).(*schema.State)
			at := st.NextRetry
			if pen != nil && Avoided(*pen, at) {
				if err := ApplyDeferral(p, st, at, pen.Until); err != nil {
					t.Fatal(err)
				}
				if ShouldArchiveDeferred(p, st, at) {
					st.Tier = schema.TierCold
				}
				deferrals++
			} else {
				if err := ApplyFailure(p, st, schema.OutcomeConnectFailed, at, false); err != nil {
					t.Fatal(err)
				}
				np, _ := PenalizePeer(p, pen, "192.0.2.1:6881", schema.OutcomeConnectFailed, at)
				pen = &np
			}
			heap.Push(&q, st)
		}
		var stillNew, failedFew, failedFewHot, failedEnough int
		for _, st := range q {
			archived := ShouldArchive(p, st, end)
			switch {
			case st.MetadataStatus == schema.StatusNew:
				stillNew++
				if !archived {
					t.Errorf("k=%d: a hash still new after a year unseen stays hot", k)
				}
			case st.Attempts < p.Archive.MinAttempts:
				failedFew++
				if st.Tier != schema.TierCold {
					failedFewHot++
				}
			default:
				failedEnough++
			}
		}
		t.Logf("k=%d after a year: %d new (archived by new_unseen), %d failed below min_attempts (%d hot), %d failed at or above; %.1f deferrals a hash",
			k, stillNew, failedFew, failedFewHot, failedEnough, float64(deferrals)/float64(k))
		if failedFewHot > 0 {
			t.Errorf("k=%d: %d failed hashes below min_attempts, unseen a year, stay hot", k, failedFewHot)
		}
		if k == 1000 && stillNew < k*9/10 {
			t.Errorf("k=%d: %d hashes still new, want most: deferrals leave a never-tried hash new", k, stillNew)
		}
	}
}

// stateQueue orders states by next_retry.
type stateQueue []*schema.State

func (q stateQueue) Len() int           { return len(q) }
func (q stateQueue) Less(i, j int) bool { return q[i].NextRetry < q[j].NextRetry }
func (q stateQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *stateQueue) Push(x any)        { *q = append(*q, x.(*schema.State)) }
func (q *stateQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}
