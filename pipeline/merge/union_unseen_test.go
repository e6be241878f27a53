package merge

import (
	"testing"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestUnionOfAResultOnlyRow: a row merge added for a fetch result of a
// hash it did not know has no sighting (seen_count 0) and placeholders for
// one: last_seen the attempt's time, last_source "import". Unioned with a
// record of the same hash that was sighted, earlier than that attempt, the
// later last_seen rule took the placeholder, and the union said the latest
// sighting was an import that never happened. The sighted record's
// last_seen and last_source are the hash's sightings; first_seen stays the
// earlier (the attempt showed the hash existed); either order.
func TestUnionOfAResultOnlyRow(t *testing.T) {
	h := hashAt(0x53, 1)
	attempt := t0 + 5*hour
	resultOnly := schema.State{InfoHash: h, HashType: schema.HashV1, FirstSeen: attempt, LastSeen: attempt,
		LastSource: schema.SourceImport, MetadataStatus: schema.StatusFailed, Attempts: 1, LastAttempt: attempt,
		LastFailure: schema.OutcomeConnectFailed, NextRetry: attempt + hour, Tier: schema.TierHot}
	earlier := resultOnly
	earlier.FirstSeen, earlier.LastSeen, earlier.LastSource = t0+4*hour, t0+4*hour, "other"
	sighted := func(seen int64, n int64) schema.State {
		st := newHash(h, seen)
		st.LastSource, st.SeenCount, st.Activity = schema.SourceAnnouncePeer, n, float64(n)
		return st
	}
	tests := []struct {
		name       string
		a, b       schema.State
		wantFirst  int64
		wantLast   int64
		wantSource string
		wantCount  int64
	}{
		{"result-only here, sighted earlier there", resultOnly, sighted(t0+3*hour, 2), t0 + 3*hour, t0 + 3*hour, schema.SourceAnnouncePeer, 2},
		{"sighted earlier here, result-only there", sighted(t0+3*hour, 2), resultOnly, t0 + 3*hour, t0 + 3*hour, schema.SourceAnnouncePeer, 2},
		{"result-only here, sighted later there", resultOnly, sighted(t0+7*hour, 2), attempt, t0 + 7*hour, schema.SourceAnnouncePeer, 2},
		{"both result-only", resultOnly, resultOnly, attempt, attempt, schema.SourceImport, 0},
		{"both result-only, the other's attempt earlier", resultOnly, earlier, t0 + 4*hour, attempt, schema.SourceImport, 0},
		{"both result-only, this one's attempt earlier", earlier, resultOnly, t0 + 4*hour, attempt, schema.SourceImport, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, additive := range []bool{true, false} {
				got, _ := unionState(schedule.Default(), tt.a, tt.b, additive)
				if got.FirstSeen != tt.wantFirst || got.LastSeen != tt.wantLast || got.LastSource != tt.wantSource ||
					got.SeenCount != tt.wantCount {
					t.Fatalf("additive %v: first_seen %d last_seen %d last_source %q seen_count %d; want %d %d %q %d",
						additive, got.FirstSeen, got.LastSeen, got.LastSource, got.SeenCount,
						tt.wantFirst, tt.wantLast, tt.wantSource, tt.wantCount)
				}
				if got.LastAttempt != attempt || got.LastFailure != schema.OutcomeConnectFailed {
					t.Fatalf("additive %v: retry columns %+v, want the attempt's", additive, got)
				}
			}
		})
	}
}
