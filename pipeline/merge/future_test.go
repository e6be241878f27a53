package merge

import (
	"math"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// TestFutureResultTimes: a result's attempted_at, a peer failure's at, or
// an ok result's end (attempted_at + total_ms, its torrent's fetched_at)
// more than FutureSkew after merge's clock is read as the clock: the
// result applies, but last_attempt, next_retry, fetched_at and the peer's
// penalty are reckoned from now, not from a time that has not come. A
// time within the skew is kept.
func TestFutureResultTimes(t *testing.T) {
	info, h := torrentInfo("future.iso")
	now := t0 + hour
	const peer = "127.0.0.1:7001"
	pf := func(at int64) schema.PeerFailure {
		return schema.PeerFailure{Addr: peer, Class: schema.OutcomeNoUTMetadata, At: at}
	}
	tests := []struct {
		name        string
		result      func(j schema.Job) schema.Result
		lastAttempt int64
		peerUntil   int64 // the penalty of peer, 0 for none
		fetchedAt   int64 // the torrent's, 0 for none
		clamped     int64
	}{
		{"failure 10 days ahead", func(j schema.Job) schema.Result {
			return failure(j, schema.OutcomeNoUTMetadata, now+10*day, pf(now+10*day))
		}, now, now + day, 0, 1},
		{"failure within the skew", func(j schema.Job) schema.Result {
			return failure(j, schema.OutcomeNoUTMetadata, now+4*minute, pf(now+4*minute))
		}, now + 4*minute, now + 4*minute + day, 0, 0},
		{"peer failure alone ahead", func(j schema.Job) schema.Result {
			return failure(j, schema.OutcomeNoUTMetadata, now-minute, pf(now+30*day))
		}, now - minute, now + day, 0, 1},
		{"ok 10 days ahead", func(j schema.Job) schema.Result {
			return success(j, info, now+10*day)
		}, now, 0, now + 1500, 1},
		// fetched_at is the attempt's end: a total_ms near 2^63 wrapped it
		// to ~292 million years BC.
		{"ok ending 2 days ahead", func(j schema.Job) schema.Result {
			r := success(j, info, now-minute)
			r.TotalMs = new(2 * day)
			return r
		}, now - minute, 0, now, 1},
		{"ok ending at the end of int64", func(j schema.Job) schema.Result {
			r := success(j, info, now-minute)
			r.TotalMs = new(int64(math.MaxInt64))
			return r
		}, now - minute, 0, now, 1},
		{"ok ending within the skew", func(j schema.Job) schema.Result {
			r := success(j, info, now-minute)
			r.TotalMs = new(5 * minute)
			return r
		}, now - minute, 0, now + 4*minute, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := makeDataset(t, []schema.State{newHash(h, t0)})
			j := planJobs(t, dir, t0, 1)[0]
			st := runMerge(t, dir, now, writeResults(t, []schema.Result{tt.result(j)}))
			if st.FutureClamped != tt.clamped || st.Applied+st.Stored != 1 {
				t.Errorf("stats: %d clamped, %d applied, %d stored; want %d clamped, one applied or stored",
					st.FutureClamped, st.Applied, st.Stored, tt.clamped)
			}
			got := stateOf(t, dir)[h]
			if got.LastAttempt != tt.lastAttempt {
				t.Errorf("last_attempt %v, want %v", tm(got.LastAttempt), tm(tt.lastAttempt))
			}
			if got.MetadataStatus == schema.StatusFailed {
				if d := got.NextRetry - tt.lastAttempt; d < 8*minute || d > 12*minute {
					t.Errorf("next_retry %v: %dm after last_attempt, want ~10m", tm(got.NextRetry), d/minute)
				}
			}
			var until int64
			for _, p := range readTable[schema.PeerPenalty](t, dir, dataset.TablePeers) {
				if p.Addr == peer {
					until = p.Until
				}
			}
			if until != tt.peerUntil {
				t.Errorf("penalty of %s until %v, want %v", peer, tm(until), tm(tt.peerUntil))
			}
			var fetched int64
			for _, tor := range readTable[schema.Torrent](t, dir, dataset.TableTorrents) {
				fetched = tor.FetchedAt
			}
			if fetched != tt.fetchedAt {
				t.Errorf("fetched_at %v, want %v", tm(fetched), tm(tt.fetchedAt))
			}
		})
	}
}
