package fetch

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/anacrolix/torrent/mse"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/tools/badpeers"
)

// TestWaysRemembered: a run remembers the way each peer spoke. A peer
// that required MSE for one hash is spoken to over MSE at once for the
// next (one dial, no retry); a plaintext peer that served one hash and
// hangs up on another it lacks is not dialled again over MSE (the
// default's retry is for peers not known to speak plaintext).
func TestWaysRemembered(t *testing.T) {
	a, b := badpeers.NewTorrent(31, 1, 10), badpeers.NewTorrent(32, 1, 10)
	type step struct {
		tor                    badpeers.Torrent
		want                   string
		detail                 string
		connects, retries, mse int64 // the run's counters after the step
	}
	tests := []struct {
		name  string
		peer  *badpeers.Peer
		steps []step
	}{
		{"requires MSE", startMSEPeer(t, mse.CryptoMethodRC4, a, b), []step{
			{a, schema.OutcomeOK, "the peer having refused a plaintext handshake", 2, 1, 1},
			{b, schema.OutcomeOK, "metadata came over MSE (RC4)", 3, 1, 2},
		}},
		{"plaintext, lacks the second", startPeer(t, badpeers.Good, a), []step{
			{a, schema.OutcomeOK, "", 1, 0, 0},
			{b, schema.OutcomePeerLacksTorrent, "hung up on our handshake", 2, 0, 0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFetcher(t, testOptions())
			for i, st := range tt.steps {
				job := schema.Job{InfoHash: st.tor.InfoHash, Peers: []string{tt.peer.Addr()}}
				r, _ := f.Fetch(context.Background(), job)
				checkResult(t, job, r)
				if r.Outcome != st.want || !strings.Contains(r.Detail, st.detail) ||
					(i > 0 && strings.Contains(r.Detail, "refused")) {
					t.Fatalf("step %d: outcome %s (%q), want %s with %q", i, r.Outcome, r.Detail, st.want, st.detail)
				}
				s := f.Stats()
				if s.Connects != st.connects || s.EncryptionRetries != st.retries || s.MSEHandshakes != st.mse {
					t.Fatalf("step %d: connects %d, encryption_retries %d, mse_handshakes %d; want %d, %d, %d",
						i, s.Connects, s.EncryptionRetries, s.MSEHandshakes, st.connects, st.retries, st.mse)
				}
			}
		})
	}
}

// TestWaysBounded: past maxWays endpoints the memory starts afresh
// rather than growing.
func TestWaysBounded(t *testing.T) {
	var w ways
	for i := range maxWays + 3 {
		w.set(strconv.Itoa(i), spokePlain)
	}
	if n := len(w.m); n > maxWays || n == 0 {
		t.Fatalf("%d endpoints remembered, want 1-%d", n, maxWays)
	}
	var none *ways
	none.set("a", spokeMSE)
	if none.get("a") != spokeUnknown {
		t.Fatal("a nil memory remembered")
	}
}
