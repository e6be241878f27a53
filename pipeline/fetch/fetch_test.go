package fetch

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/tools/badpeers"
)

// TestEachClassFromItsPeer: a job whose only peer misbehaves in one way
// ends with exactly that behaviour's class, and peer_failures names that
// peer with that class. Without a DHT node no lookup ran: lookup_ms is
// null; the other timings are null where their stage did not run
// (checkStageTimings), and handshake_ms, extension_ms and verify_ms are
// set exactly when that peer got through the BEP 3 handshake, the BEP 10
// one and the hash check (stages: "h", "he", "hev").
func TestEachClassFromItsPeer(t *testing.T) {
	f := newFetcher(t, testOptions())
	tor := badpeers.NewTorrent(1, 5, 1200) // metadata spans two BEP 9 pieces
	type row struct {
		name    string
		peer    *badpeers.Peer
		tor     badpeers.Torrent
		want    string
		failure bool   // peer_failures lists the peer
		stages  string // h: handshake_ms set, e: extension_ms, v: verify_ms
	}
	stages := map[badpeers.Behaviour]string{badpeers.Good: "hev", badpeers.NoExtension: "h", badpeers.BadExtHandshake: "h",
		badpeers.NoUTMetadata: "he", badpeers.Reject: "he", badpeers.WrongTorrent: "he", badpeers.TooLarge: "he", badpeers.Garbage: "he"}
	var rows []row
	for _, b := range badpeers.Behaviours() {
		rows = append(rows, row{string(b), startPeer(t, b, tor), tor, b.Expect(), b != badpeers.Good, stages[b]})
	}
	invalid, repeated := badpeers.InvalidTorrent(2), badpeers.RepeatedKeyTorrent(3)
	rows = append(rows,
		// The info matches its infohash: the hash is bad, the peer that
		// served it faithfully is not (peer_failures would penalise it
		// for every hash it seeds).
		row{"good peer, invalid info", startPeer(t, badpeers.Good, invalid), invalid, schema.OutcomeInvalidMetadata, false, "hev"},
		// Two names under one hash: no reading of them is the right one.
		row{"good peer, info with a repeated key", startPeer(t, badpeers.Good, repeated), repeated, schema.OutcomeInvalidMetadata, false, "hev"},
		// It does not serve this torrent: a per-hash fact, listed so that
		// the result shows it, which merge holds against no endpoint.
		row{"good peer without the torrent", startPeer(t, badpeers.Good), tor, schema.OutcomePeerLacksTorrent, true, ""},
		// No DHT node, no --peer, no peer in the job: nowhere to look,
		// our set-up's doing, not the swarm's (TestNoPeerSource).
		row{"no peer source", nil, tor, schema.OutcomeLocalError, false, ""},
	)
	for _, tt := range rows {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			job := schema.Job{InfoHash: tt.tor.InfoHash, HashType: schema.HashV1, Attempt: 3, LeaseID: "L1"}
			if tt.peer != nil {
				job.Peers = []string{tt.peer.Addr()}
			}
			r, ok := f.Fetch(context.Background(), job)
			if !ok {
				t.Fatal("attempt abandoned")
			}
			checkResult(t, job, r)
			if r.Outcome != tt.want {
				t.Fatalf("outcome %s (%s), want %s", r.Outcome, r.Detail, tt.want)
			}
			var want []schema.PeerFailure
			if tt.failure {
				want = []schema.PeerFailure{{Addr: tt.peer.Addr(), Class: tt.want}}
			}
			if len(r.PeerFailures) != len(want) || (len(want) == 1 && (r.PeerFailures[0].Addr != want[0].Addr || r.PeerFailures[0].Class != want[0].Class)) {
				t.Fatalf("peer_failures %+v, want %+v", r.PeerFailures, want)
			}
			if tt.want == schema.OutcomeOK && (r.NameOr() != tt.tor.Name || r.FileCount == nil || *r.FileCount != 5 || r.ServedBy != tt.peer.Addr()) {
				t.Fatalf("metadata not decoded: name %q files %v served by %s", r.NameOr(), r.FileCount, r.ServedBy)
			}
			if r.LookupMs != nil {
				t.Errorf("lookup_ms %d without a DHT node, want NULL", *r.LookupMs)
			}
			for i, c := range []struct {
				name string
				ms   *int64
			}{{"handshake_ms", r.HandshakeMs}, {"extension_ms", r.ExtensionMs}, {"verify_ms", r.VerifyMs}} {
				if want := strings.Contains(tt.stages, "hev"[i:i+1]); (c.ms != nil) != want {
					t.Errorf("%s %s, want it set: %v", c.name, msText(c.ms), want)
				}
			}
			if tt.want == schema.OutcomeTooLarge && r.MetadataSize != 10<<20+1 {
				t.Fatalf("too_large result records metadata_size %d", r.MetadataSize)
			}
		})
	}
}

// TestGoodBehindBadPeer: with one peer at a time, every kind of bad first
// peer is tried, recorded, and the good second peer still serves.
func TestGoodBehindBadPeer(t *testing.T) {
	o := testOptions()
	o.PeersPerHash = 1
	f := newFetcher(t, o)
	tor := badpeers.NewTorrent(3, 2, 50)
	good := startPeer(t, badpeers.Good, tor)
	for _, b := range badpeers.Behaviours()[1:] {
		t.Run(string(b), func(t *testing.T) {
			t.Parallel()
			bad := startPeer(t, b, tor)
			job := schema.Job{InfoHash: tor.InfoHash, Peers: []string{bad.Addr(), good.Addr()}}
			r, _ := f.Fetch(context.Background(), job)
			checkResult(t, job, r)
			if r.Outcome != schema.OutcomeOK || r.ServedBy != good.Addr() {
				t.Fatalf("outcome %s (%s) served by %q", r.Outcome, r.Detail, r.ServedBy)
			}
			if len(r.PeerFailures) != 1 || r.PeerFailures[0].Class != b.Expect() || r.PeersTried != 2 {
				t.Fatalf("peer_failures %+v, tried %d", r.PeerFailures, r.PeersTried)
			}
		})
	}
}

// TestPrecedence: when peers fail differently, the attempt's outcome is
// the highest-ranked class, and every failure is recorded.
func TestPrecedence(t *testing.T) {
	o := testOptions()
	o.PeersPerHash = 16
	f := newFetcher(t, o)
	tor := badpeers.NewTorrent(4, 1, 10)
	peers := map[badpeers.Behaviour]*badpeers.Peer{}
	for _, b := range badpeers.Behaviours()[1:] {
		peers[b] = startPeer(t, b, tor)
	}
	tests := []struct {
		name string
		mix  []badpeers.Behaviour
		want string
	}{
		{"mismatch beats all", []badpeers.Behaviour{badpeers.Refuse, badpeers.Stall, badpeers.Reject, badpeers.WrongTorrent, badpeers.TooLarge}, schema.OutcomeHashMismatch},
		{"too large beats invalid", []badpeers.Behaviour{badpeers.Garbage, badpeers.TooLarge, badpeers.Close}, schema.OutcomeTooLarge},
		{"invalid beats rejected", []badpeers.Behaviour{badpeers.Reject, badpeers.Garbage}, schema.OutcomeInvalidMetadata},
		// A garbled extended handshake is the peer's failure, ranked
		// among the peer-level classes, not above them as bad metadata.
		{"rejected beats a bad extended handshake", []badpeers.Behaviour{badpeers.BadExtHandshake, badpeers.Reject}, schema.OutcomeRejected},
		{"rejected beats no_ut_metadata", []badpeers.Behaviour{badpeers.NoUTMetadata, badpeers.Reject, badpeers.NoExtension}, schema.OutcomeRejected},
		{"peer-level beats timeout", []badpeers.Behaviour{badpeers.Stall, badpeers.WrongHash}, schema.OutcomePeerLacksTorrent},
		// A peer that is not BitTorrent at all is the endpoint's fault; one
		// that lacks the torrent (Close, WrongHash) is this hash's only.
		{"handshake_failed beats peer_lacks_torrent", []badpeers.Behaviour{badpeers.Close, badpeers.NotBitTorrent, badpeers.WrongHash}, schema.OutcomeHandshakeFailed},
		{"peer_lacks_torrent beats connect_failed", []badpeers.Behaviour{badpeers.Refuse, badpeers.Close}, schema.OutcomePeerLacksTorrent},
		{"timeout beats connect_failed", []badpeers.Behaviour{badpeers.Refuse, badpeers.Stall}, schema.OutcomeTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			job := schema.Job{InfoHash: tor.InfoHash}
			for _, b := range tt.mix {
				job.Peers = append(job.Peers, peers[b].Addr())
			}
			r, _ := f.Fetch(context.Background(), job)
			checkResult(t, job, r)
			if r.Outcome != tt.want {
				t.Fatalf("outcome %s (%s), want %s", r.Outcome, r.Detail, tt.want)
			}
			var got, want []string
			for _, pf := range r.PeerFailures {
				got = append(got, pf.Class)
			}
			for _, b := range tt.mix {
				want = append(want, b.Expect())
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("peer failure classes %v, want %v", got, want)
			}
		})
	}
}

func TestClassesOrder(t *testing.T) {
	cs := Classes()
	if len(cs) != len(precedence) {
		t.Fatalf("Classes has %d entries, precedence %d", len(cs), len(precedence))
	}
	for i := 1; i < len(cs); i++ {
		if !Outranks(cs[i-1], cs[i]) {
			t.Fatalf("%s does not outrank %s", cs[i-1], cs[i])
		}
	}
}

// TestAvoidPeers: avoided endpoints are never dialled, and an attempt
// whose every found peer was avoided (the job's avoid_peers, whose
// penalty's end no avoid list says: taken as running) is peers_penalised,
// not the swarm-level no_peers that would move the hash along its
// schedule. The fetcher's DHT node (one loopback node that knows no
// peer) is there so that a job without peers has looked somewhere.
func TestAvoidPeers(t *testing.T) {
	o := testOptions()
	o.Bootstrap = []string{startSlowNode(t, 0, nil, nil)}
	f := newFetcher(t, o)
	tor := badpeers.NewTorrent(5, 1, 10)
	good := startPeer(t, badpeers.Good, tor)
	job := schema.Job{InfoHash: tor.InfoHash, Peers: []string{good.Addr()}, AvoidPeers: []string{good.Addr()}}
	r, _ := f.Fetch(context.Background(), job)
	if r.Outcome != schema.OutcomePeersPenalised || r.RetryAfter != r.AttemptedAt || r.PeersTried != 0 || len(r.PeerFailures) != 0 ||
		!strings.Contains(r.Detail, "all 1 peers found are penalised") {
		t.Fatalf("outcome %s (%s), retry_after %d, tried %d, peer failures %v; want peers_penalised at the attempt's time, none tried",
			r.Outcome, r.Detail, r.RetryAfter, r.PeersTried, r.PeerFailures)
	}
	if r, _ := f.Fetch(context.Background(), schema.Job{InfoHash: tor.InfoHash}); r.Outcome != schema.OutcomeNoPeers {
		t.Fatalf("no peer found at all: outcome %s, want no_peers", r.Outcome)
	}
	if st := f.Stats(); st.Connects != 0 || st.PeersAvoided != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestLocalErrorWhenDHTUnreachable: with no DHT node answering and no
// other peers, the attempt is our failure, not the hash's.
func TestLocalErrorWhenDHTUnreachable(t *testing.T) {
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := c.LocalAddr().String()
	c.Close()
	o := testOptions()
	o.Bootstrap = []string{dead}
	o.Timeout = time.Second
	f := newFetcher(t, o)
	r, _ := f.Fetch(context.Background(), schema.Job{InfoHash: schema.Hash{1, 2, 3}})
	if r.Outcome != schema.OutcomeLocalError {
		t.Fatalf("outcome %s (%s), want local_error", r.Outcome, r.Detail)
	}
	if st := f.Stats(); st.Lookups != 1 || st.LookupsFailed != 1 {
		t.Fatalf("lookups %d failed %d", st.Lookups, st.LookupsFailed)
	}
}

// TestAbandonedOnCancel: an attempt cut short by the run stopping yields
// no result.
func TestAbandonedOnCancel(t *testing.T) {
	o := testOptions()
	o.PeerTimeout = backstop // the stall ends only by the cancel
	f := newFetcher(t, o)
	tor := badpeers.NewTorrent(6, 1, 10)
	stall := startPeer(t, badpeers.Stall)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // cancel once the attempt is stuck on the stalling peer
		for stall.Accepted() == 0 && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	if r, ok := f.Fetch(ctx, schema.Job{InfoHash: tor.InfoHash, Peers: []string{stall.Addr()}}); ok {
		t.Fatalf("got a result for an abandoned attempt: %s", r.Outcome)
	}
}

// TestIOFailureClasses: ioFailure tells a timeout, a local resource error and a lost connection apart.
func TestIOFailureClasses(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{os.ErrDeadlineExceeded, schema.OutcomeTimeout},
		{&net.OpError{Op: "dial", Err: os.NewSyscallError("socket", syscall.EMFILE)}, schema.OutcomeLocalError},
		{fmt.Errorf("wrapped: %w", syscall.EADDRNOTAVAIL), schema.OutcomeLocalError},
		{io.EOF, schema.OutcomeHandshakeFailed},
		{syscall.ECONNRESET, schema.OutcomeHandshakeFailed},
	}
	for _, tt := range tests {
		if got := ioFailure(tt.err, schema.OutcomeHandshakeFailed, "test").Class; got != tt.want {
			t.Errorf("%v: class %s, want %s", tt.err, got, tt.want)
		}
	}
}
