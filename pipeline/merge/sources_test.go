package merge

import (
	"testing"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

func pfail(port, class string, at int64) schema.PeerFailure {
	return schema.PeerFailure{Addr: "127.0.0.1:" + port, Class: class, At: at}
}

// TestBadSourcesInOneAttempt: every peer of a result that served bad
// metadata or claimed too_large is a source, whatever its class; a
// peer-level failure beside them is not.
func TestBadSourcesInOneAttempt(t *testing.T) {
	p := schedule.Default()
	at := t0 + minute
	tests := []struct {
		name    string
		outcome string
		peers   []schema.PeerFailure
		wantBad int32
	}{
		{"one hash_mismatch", schema.OutcomeHashMismatch,
			[]schema.PeerFailure{pfail("6001", schema.OutcomeHashMismatch, at)}, 1},
		{"hash_mismatch and invalid_metadata", schema.OutcomeHashMismatch,
			[]schema.PeerFailure{pfail("6001", schema.OutcomeHashMismatch, at), pfail("6002", schema.OutcomeInvalidMetadata, at)}, 2},
		{"hash_mismatch and too_large", schema.OutcomeHashMismatch,
			[]schema.PeerFailure{pfail("6001", schema.OutcomeHashMismatch, at), pfail("6002", schema.OutcomeTooLarge, at)}, 2},
		{"too_large and invalid_metadata", schema.OutcomeTooLarge,
			[]schema.PeerFailure{pfail("6001", schema.OutcomeTooLarge, at), pfail("6002", schema.OutcomeInvalidMetadata, at)}, 2},
		{"one peer, two classes", schema.OutcomeHashMismatch,
			[]schema.PeerFailure{pfail("6001", schema.OutcomeHashMismatch, at), pfail("6001", schema.OutcomeInvalidMetadata, at)}, 1},
		{"a peer-level failure is no source", schema.OutcomeHashMismatch,
			[]schema.PeerFailure{pfail("6001", schema.OutcomeHashMismatch, at), pfail("6002", schema.OutcomeHandshakeFailed, at)}, 1},
		{"no peer named", schema.OutcomeInvalidMetadata, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newHash(hashAt(0x50, 1), t0)
			r := schema.Result{InfoHash: st.InfoHash, AttemptedAt: at, Outcome: tt.outcome, PeerFailures: tt.peers}
			if v, _ := applyResult(p, &st, &r, nil); v != applied {
				t.Fatalf("verdict %d, want applied", v)
			}
			if st.BadMetadata != tt.wantBad {
				t.Errorf("bad_metadata %d, want %d", st.BadMetadata, tt.wantBad)
			}
			if long := st.BadMetadata >= p.BadMetadata.Sources; long != (st.NextRetry-at > day) {
				t.Errorf("retry after %dm with bad_metadata %d", (st.NextRetry-at)/minute, st.BadMetadata)
			}
		})
	}
}
