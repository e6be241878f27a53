package merge

import (
	"fmt"
	"testing"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestDeferredFailedGoesCold: a failed hash whose known peers are all
// penalised gets peers_penalised deferrals, which count no attempt, so it
// may never reach archive.min_attempts and stay hot for ever. When merge
// defers such a hash while it is failed and unseen for archive.unseen, it
// goes cold in that merge, whatever its attempts, by the splice path and
// the full path alike, counted in archived_deferred as in
// archived_to_cold. A failed hash at min_attempts goes cold by the
// policy's rule, not counted as a deferral's. A hash seen recently stays
// hot, as does one a counted failure (not a deferral) leaves below
// min_attempts; a new hash is left to archive.new_unseen (no deferral's
// either); archive.unseen 0 turns the rule off.
func TestDeferredFailedGoesCold(t *testing.T) {
	now := t0 + 400*day
	const (
		failed    = iota // two counted attempts, below min_attempts (6)
		failedMin        // six counted attempts: min_attempts
		fresh            // never tried
	)
	for _, tt := range []struct {
		name     string
		status   int
		unseen   int64 // days since last_seen
		outcome  string
		policy   func(*schedule.Policy)
		wantTier string
	}{
		{"failed, unseen 100 days, deferred: cold", failed, 100, schema.OutcomePeersPenalised, nil, schema.TierCold},
		{"failed at min_attempts, unseen 100 days, deferred: cold by the rule", failedMin, 100,
			schema.OutcomePeersPenalised, nil, schema.TierCold},
		{"failed, unseen exactly archive.unseen, deferred: cold", failed, 90, schema.OutcomePeersPenalised, nil,
			schema.TierCold},
		{"failed, seen 89 days ago, deferred: hot", failed, 89, schema.OutcomePeersPenalised, nil, schema.TierHot},
		{"failed, unseen 100 days, a counted failure below min_attempts: hot", failed, 100, schema.OutcomeNoPeers, nil,
			schema.TierHot},
		{"new, unseen 100 days, deferred, new_unseen 0: hot", fresh, 100, schema.OutcomePeersPenalised,
			func(p *schedule.Policy) { p.Archive.NewUnseen = 0 }, schema.TierHot},
		{"new, unseen 100 days, deferred, new_unseen 90d: cold by new_unseen", fresh, 100,
			schema.OutcomePeersPenalised, nil, schema.TierCold},
		{"failed, unseen 100 days, deferred, archive.unseen 0: off", failed, 100, schema.OutcomePeersPenalised,
			func(p *schedule.Policy) { p.Archive.Unseen = 0 }, schema.TierHot},
	} {
		for _, full := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/full=%v", tt.name, full), func(t *testing.T) {
				p := schedule.Default()
				if tt.policy != nil {
					tt.policy(&p)
				}
				h := hashAt(0x41, 1)
				st := newHash(h, now-tt.unseen*day)
				st.Peers = []string{"127.0.0.1:7001"}
				if tt.status != fresh {
					for k := range map[int]int64{failed: 2, failedMin: 6}[tt.status] {
						if err := schedule.ApplyFailure(p, &st, schema.OutcomeHandshakeFailed, st.LastSeen+(k+1)*hour, false); err != nil {
							t.Fatal(err)
						}
					}
					st.NextRetry = now - hour
				}
				other := newHash(hashAt(0x41, 2), now-day) // fetched, seen yesterday: not planned, stays hot
				schedule.ApplySuccess(&other, now-day)
				dir := makeDataset(t, []schema.State{st, other})
				if err := schedule.Save(dir, p); err != nil {
					t.Fatal(err)
				}
				jobs := planJobs(t, dir, now, 1)
				if len(jobs) != 1 || jobs[0].InfoHash != h {
					t.Fatalf("jobs %+v, want one for %x", jobs, h)
				}
				r := failure(jobs[0], tt.outcome, now+minute)
				if tt.outcome == schema.OutcomePeersPenalised {
					r.RetryAfter = now + 6*hour
				}
				stats := mergeVia(t, dir, now+2*minute, full, writeResults(t, []schema.Result{r}))
				if !full && stats.Spliced != stats.Partitions {
					t.Fatalf("%d of %d partitions spliced, want all", stats.Spliced, stats.Partitions)
				}
				s := stateOf(t, dir)
				got := s[h]
				wantStatus := map[int]string{failed: schema.StatusFailed, failedMin: schema.StatusFailed,
					fresh: schema.StatusNew}[tt.status]
				if tt.outcome != schema.OutcomePeersPenalised {
					wantStatus = schema.StatusFailed
				}
				if got.Tier != tt.wantTier || got.MetadataStatus != wantStatus {
					t.Fatalf("hash: tier %s status %s attempts %d, want tier %s status %s", got.Tier,
						got.MetadataStatus, got.Attempts, tt.wantTier, wantStatus)
				}
				wantArchived, wantDeferred := int64(0), int64(0)
				if tt.wantTier == schema.TierCold {
					wantArchived = 1
					if tt.status == failed { // below min_attempts: cold only as deferred
						wantDeferred = 1
					}
				}
				if stats.Archived != wantArchived || stats.ArchivedByDefer != wantDeferred {
					t.Fatalf("archived_to_cold %d archived_deferred %d, want %d %d", stats.Archived,
						stats.ArchivedByDefer, wantArchived, wantDeferred)
				}
				if s[other.InfoHash].Tier != schema.TierHot {
					t.Fatal("the hash seen yesterday went cold")
				}
			})
		}
	}
}
