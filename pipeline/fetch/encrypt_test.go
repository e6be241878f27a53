package fetch

import (
	"context"
	"crypto/sha1"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/anacrolix/torrent/mse"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/tools/badpeers"
)

// TestEncryptionPolicies: each --encryption policy against a peer that
// requires MSE, a plaintext peer, one that sends garbage and ones that
// hang up. The default gets the metadata of a peer requiring MSE with one
// more dial, and costs a plaintext peer nothing (one dial, no MSE);
// --encryption off leaves a peer requiring MSE peer_lacks_torrent. The
// counters say how many dials, MSE handshakes and retries it took, and an
// ok result's detail how the metadata came.
func TestEncryptionPolicies(t *testing.T) {
	tor := badpeers.NewTorrent(21, 3, 900) // metadata spans two BEP 9 pieces
	rc4 := startMSEPeer(t, mse.CryptoMethodRC4, tor)
	plainAfterKeys := startMSEPeer(t, mse.CryptoMethodPlaintext, tor)
	lacking := startMSEPeer(t, mse.CryptoMethodRC4) // holds no torrent
	good := startPeer(t, badpeers.Good, tor)
	garbage := startPeer(t, badpeers.MSEGarbage)
	closer := startPeer(t, badpeers.Close)
	type counts struct{ connects, mse, mseOK, retries int64 }
	tests := []struct {
		name   string
		peer   *badpeers.Peer
		policy Encryption
		want   string
		detail string // in the result's detail
		counts counts
	}{
		{"requires MSE (RC4), default", rc4, EncryptionPreferPlain, schema.OutcomeOK,
			"metadata came over MSE (RC4), the peer having refused a plaintext handshake", counts{2, 1, 1, 1}},
		{"requires MSE (plaintext after the keys), default", plainAfterKeys, EncryptionPreferPlain, schema.OutcomeOK,
			"metadata came over MSE (plaintext after the key exchange), the peer having refused", counts{2, 1, 1, 1}},
		{"requires MSE, prefer", rc4, EncryptionPrefer, schema.OutcomeOK, "metadata came over MSE (RC4)", counts{1, 1, 1, 0}},
		{"requires MSE, require", rc4, EncryptionRequire, schema.OutcomeOK, "metadata came over MSE (RC4)", counts{1, 1, 1, 0}},
		{"requires MSE, off", rc4, EncryptionOff, schema.OutcomePeerLacksTorrent, "hung up on our handshake", counts{1, 0, 0, 0}},
		{"requires MSE, lacks the torrent, default", lacking, EncryptionPreferPlain, schema.OutcomePeerLacksTorrent,
			"then over MSE: peer hung up on our MSE handshake", counts{2, 1, 0, 1}},
		{"plaintext peer, default: no extra round trip", good, EncryptionPreferPlain, schema.OutcomeOK, "", counts{1, 0, 0, 0}},
		{"plaintext peer, off", good, EncryptionOff, schema.OutcomeOK, "", counts{1, 0, 0, 0}},
		{"plaintext peer, prefer", good, EncryptionPrefer, schema.OutcomeOK,
			"metadata came in plaintext, the peer having refused an MSE handshake", counts{2, 1, 0, 1}},
		{"plaintext peer, require", good, EncryptionRequire, schema.OutcomePeerLacksTorrent, "MSE handshake", counts{1, 1, 0, 0}},
		{"garbage, default", garbage, EncryptionPreferPlain, schema.OutcomeHandshakeFailed,
			"MSE answer is garbage", counts{2, 1, 0, 1}},
		{"garbage, off", garbage, EncryptionOff, schema.OutcomeHandshakeFailed, "does not speak the BitTorrent", counts{1, 0, 0, 0}},
		{"garbage, require", garbage, EncryptionRequire, schema.OutcomeHandshakeFailed, "MSE answer is garbage", counts{1, 1, 0, 0}},
		{"hangs up on both, default", closer, EncryptionPreferPlain, schema.OutcomePeerLacksTorrent,
			"then over MSE: peer hung up", counts{2, 1, 0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := testOptions()
			o.Encryption = tt.policy
			f := newFetcher(t, o) // counters of its own
			job := schema.Job{InfoHash: tor.InfoHash, HashType: schema.HashV1, Peers: []string{tt.peer.Addr()}}
			r, ok := f.Fetch(context.Background(), job)
			if !ok {
				t.Fatal("attempt abandoned")
			}
			checkResult(t, job, r)
			if r.Outcome != tt.want || !strings.Contains(r.Detail, tt.detail) || (tt.detail == "" && r.Detail != "") {
				t.Fatalf("outcome %s (%q), want %s with %q", r.Outcome, r.Detail, tt.want, tt.detail)
			}
			if tt.want != schema.OutcomeOK && (len(r.PeerFailures) != 1 || r.PeerFailures[0].Class != tt.want) {
				t.Errorf("peer_failures %+v, want one %s", r.PeerFailures, tt.want)
			}
			s := f.Stats()
			got := counts{s.Connects, s.MSEHandshakes, s.MSEHandshakesOK, s.EncryptionRetries}
			if got != tt.counts {
				t.Errorf("connects, mse_handshakes, mse_handshakes_ok, encryption_retries = %v, want %v", got, tt.counts)
			}
			if s.Connects != s.ConnectsOK+s.ConnectsFailed+s.ConnectsCancelled+s.ConnectsLocalError {
				t.Errorf("connects %d do not add up: %+v", s.Connects, s)
			}
		})
	}
}

// startMSEPeer starts a peer that requires MSE, choosing method when
// offered, holding ts.
func startMSEPeer(t *testing.T, method mse.CryptoMethod, ts ...badpeers.Torrent) *badpeers.Peer {
	t.Helper()
	p, err := badpeers.Start(badpeers.RequireMSE, badpeers.Config{MSECrypto: method})
	if err != nil {
		t.Fatal(err)
	}
	p.Add(ts...)
	t.Cleanup(func() { p.Close() })
	return p
}

// TestGarbageMSEPeerGoesOn: a peer that answers MSE with garbage fails by
// itself (handshake_failed, listed against it), and the attempt goes on
// to the next peer, which serves.
func TestGarbageMSEPeerGoesOn(t *testing.T) {
	o := testOptions()
	o.PeersPerHash = 1
	o.Encryption = EncryptionRequire
	f := newFetcher(t, o)
	tor := badpeers.NewTorrent(22, 1, 30)
	garbage := startPeer(t, badpeers.MSEGarbage)
	good := startMSEPeer(t, mse.CryptoMethodRC4, tor)
	job := schema.Job{InfoHash: tor.InfoHash, Peers: []string{garbage.Addr(), good.Addr()}}
	r, _ := f.Fetch(context.Background(), job)
	checkResult(t, job, r)
	if r.Outcome != schema.OutcomeOK || r.ServedBy != good.Addr() || r.PeersTried != 2 {
		t.Fatalf("outcome %s (%s) served by %q, tried %d", r.Outcome, r.Detail, r.ServedBy, r.PeersTried)
	}
	if len(r.PeerFailures) != 1 || r.PeerFailures[0].Addr != garbage.Addr() || r.PeerFailures[0].Class != schema.OutcomeHandshakeFailed {
		t.Fatalf("peer_failures %+v, want the garbage peer's handshake_failed", r.PeerFailures)
	}
}

// TestMSEAnswers: how talkEncrypted classifies what an MSE peer does,
// from a real MSE receiver choosing a method we did not offer or hanging
// up once the MSE handshake is done, and from
// raw answers: a hang-up before its key (a plaintext peer: worth a
// plaintext try), a plaintext handshake, a key and then a hang-up (it
// lacks the torrent), and garbage past where the verification constant
// must be.
func TestMSEAnswers(t *testing.T) {
	ih := sha1.Sum(fuzzInfo)
	tests := []struct {
		name      string
		peer      func(c net.Conn)
		want      string
		plainPeer bool
	}{
		{"chooses a method not offered", func(c net.Conn) {
			skeys := func(yield func([]byte) bool) { yield(ih[:]) }
			_, _, _ = mse.ReceiveHandshake(context.Background(), c, skeys, func(mse.CryptoMethod) mse.CryptoMethod { return 4 })
		}, schema.OutcomeHandshakeFailed, false},
		// It knew the infohash (our MSE key), so it serves the torrent:
		// hanging up then is its failure, not a lack of the torrent.
		{"completes MSE, then hangs up", func(c net.Conn) {
			skeys := func(yield func([]byte) bool) { yield(ih[:]) }
			_, _, _ = mse.ReceiveHandshake(context.Background(), c, skeys, mse.DefaultCryptoSelector)
		}, schema.OutcomeHandshakeFailed, false},
		{"hangs up at once", func(c net.Conn) {}, schema.OutcomePeerLacksTorrent, true},
		{"answers with a plaintext handshake", answer(appendHandshake(nil, ih, ih)), schema.OutcomePeerLacksTorrent, true},
		{"sends its key and hangs up", answer(make([]byte, 96+300)), schema.OutcomePeerLacksTorrent, false},
		{"garbage", answer(make([]byte, mseSyncWindow+10)), schema.OutcomeHandshakeFailed, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, plainPeer := runMSE(ih, tt.peer)
			if o.Err == nil || o.Err.Class != tt.want || plainPeer != tt.plainPeer {
				t.Fatalf("got %v (plaintext peer %v), want %s (%v)", o.Err, plainPeer, tt.want, tt.plainPeer)
			}
		})
	}
}

// answer is a peer that sends b, reading what it is sent meanwhile (a
// pipe has no buffer a socket's would be), and hangs up.
func answer(b []byte) func(c net.Conn) {
	return func(c net.Conn) {
		go io.Copy(io.Discard, c)
		c.Write(b)
	}
}

// runMSE runs talkEncrypted for ih against peer, which gets its side of
// a pipe, closed once peer returns.
func runMSE(ih [20]byte, peer func(c net.Conn)) (peerOutcome, bool) {
	ours, theirs := net.Pipe()
	defer ours.Close()
	go func() {
		defer theirs.Close()
		peer(theirs)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), backstop)
	defer cancel()
	cfg := &exchangeConfig{InfoHash: ih, MaxMetadataSize: 1 << 20, Stats: newCounters(), Mem: &memBudget{limit: 1 << 20}}
	var o peerOutcome
	plainPeer := talkEncrypted(ctx, ours, cfg, &o, time.Now(), time.Now())
	return o, plainPeer
}

// FuzzMSEAnswer feeds arbitrary bytes to an MSE handshake as the peer's
// answer: it never panics or hangs, and every failure has a known class,
// never timeout (the peer hung up).
func FuzzMSEAnswer(f *testing.F) {
	f.Add([]byte{})
	f.Add(make([]byte, 96))
	f.Add(make([]byte, mseSyncWindow))
	f.Add(appendHandshake(nil, [20]byte{1}, [20]byte{2}))
	ih := sha1.Sum(fuzzInfo)
	f.Fuzz(func(t *testing.T, stream []byte) {
		o, _ := runMSE(ih, answer(stream))
		switch {
		case o.Err == nil:
			t.Fatal("ok from a peer that sent no metadata")
		case precedence[o.Err.Class] == 0:
			t.Fatalf("unknown class %q", o.Err.Class)
		case o.Err.Class == schema.OutcomeTimeout:
			t.Fatalf("peer hung up, but the exchange timed out: %v", o.Err)
		}
	})
}

// TestRetryDialRefused: a peer that hangs up on plaintext and then
// refuses the MSE dial stays peer_lacks_torrent (the refused dial tells
// less), its detail saying both, and the refused dial counts in
// connects_failed, so that connects still add up.
func TestRetryDialRefused(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		ln.Close() // the next dial is refused
		if err == nil {
			c.Close()
		}
	}()
	f := newFetcher(t, testOptions())
	tor := badpeers.NewTorrent(23, 1, 10)
	job := schema.Job{InfoHash: tor.InfoHash, Peers: []string{ln.Addr().String()}}
	r, _ := f.Fetch(context.Background(), job)
	checkResult(t, job, r)
	if r.Outcome != schema.OutcomePeerLacksTorrent || !strings.Contains(r.Detail, "then over MSE: dial:") {
		t.Fatalf("outcome %s (%q), want %s saying the MSE dial failed", r.Outcome, r.Detail, schema.OutcomePeerLacksTorrent)
	}
	s := f.Stats()
	if s.Connects != 2 || s.ConnectsOK != 1 || s.ConnectsFailed != 1 || s.EncryptionRetries != 1 || s.MSEHandshakes != 0 {
		t.Fatalf("connects %d (ok %d, failed %d), encryption_retries %d, mse_handshakes %d; want 2 (1, 1), 1, 0",
			s.Connects, s.ConnectsOK, s.ConnectsFailed, s.EncryptionRetries, s.MSEHandshakes)
	}
}

// BenchmarkEncryption times one job against one loopback peer: a
// plaintext peer and a peer requiring MSE, under the default policy and
// under prefer (MSE first). Loopback has no round-trip time to speak of,
// so this measures the key exchange's CPU and the extra dial, not what
// the round trips cost on the Internet.
func BenchmarkEncryption(b *testing.B) {
	tor := badpeers.NewTorrent(24, 2, 40)
	for _, tt := range []struct {
		name   string
		peer   badpeers.Behaviour
		policy Encryption
	}{
		{"plaintext peer/prefer-plain", badpeers.Good, EncryptionPreferPlain},
		{"plaintext peer/prefer", badpeers.Good, EncryptionPrefer},
		{"MSE peer/prefer-plain", badpeers.RequireMSE, EncryptionPreferPlain},
		{"MSE peer/prefer", badpeers.RequireMSE, EncryptionPrefer},
	} {
		b.Run(tt.name, func(b *testing.B) {
			p, err := badpeers.Start(tt.peer, badpeers.Config{})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			p.Add(tor)
			o := testOptions()
			o.Encryption = tt.policy
			f := newFetcher(b, o)
			job := schema.Job{InfoHash: tor.InfoHash, Peers: []string{p.Addr()}}
			for b.Loop() {
				if r, _ := f.Fetch(context.Background(), job); r.Outcome != schema.OutcomeOK {
					b.Fatalf("outcome %s (%s)", r.Outcome, r.Detail)
				}
			}
		})
	}
}
