package badpeers

import (
	"crypto/sha1"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/infohash/infohash/tools/testnet"
)

// hangGuard bounds a wait for what must happen on loopback (a connect, a
// Close, an EOF): it only ends a test whose code hangs, and claims no
// speed (1 s and 5 s bounds here could fail on a loaded machine).
const hangGuard = time.Minute

func TestBehaviours(t *testing.T) {
	seen := map[Behaviour]bool{}
	for _, b := range Behaviours() {
		if b.Expect() == "" || seen[b] {
			t.Fatalf("behaviour %q: no expectation or listed twice", b)
		}
		seen[b] = true
		p, err := Start(b, Config{})
		if err != nil {
			t.Fatal(err)
		}
		c, err := net.DialTimeout("tcp", p.Addr(), hangGuard)
		if b == Refuse {
			if err == nil {
				t.Fatal("refusing peer accepted a connection")
			}
		} else if err != nil {
			t.Fatalf("%s: %v", b, err)
		} else {
			c.Close()
		}
		if err := p.Close(); err != nil {
			t.Fatalf("%s: close: %v", b, err)
		}
	}
	if _, err := Start("nonsense", Config{}); err == nil {
		t.Fatal("unknown behaviour started")
	}
}

// TestStallClosesOnClose: Close ends stalled connections too.
func TestStallClosesOnClose(t *testing.T) {
	p, err := Start(Stall, Config{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write(make([]byte, 68))
	// Close must find the connection accepted (one still in the listen
	// backlog is reset by the kernel, whatever Close does); this waited a
	// fixed 50 ms, too short on a loaded machine.
	waitAccepted(t, p, 1)
	done := make(chan struct{})
	go func() { p.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(hangGuard):
		t.Fatal("Close hung on a stalled connection")
	}
	// Closed means EOF, or a reset when the peer had not yet read the
	// handshake (Linux resets a socket closed with unread data); only a
	// connection still open runs into the deadline.
	c.SetReadDeadline(time.Now().Add(hangGuard))
	if _, err := io.ReadAll(c); err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("connection not closed by the peer: %v", err)
	}
}

// waitAccepted waits until p has accepted n connections.
func waitAccepted(t *testing.T, p *Peer, n int64) {
	t.Helper()
	for p.Accepted() < n {
		if t.Context().Err() != nil {
			t.Fatalf("peer accepted %d connections, want %d", p.Accepted(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestAccepted: every behaviour but Refuse counts the connections it
// accepts.
func TestAccepted(t *testing.T) {
	for _, b := range Behaviours()[1:] {
		if b == Refuse {
			continue
		}
		p, err := Start(b, Config{})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			c, err := net.Dial("tcp", p.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
		}
		waitAccepted(t, p, 3)
		if got := p.Accepted(); got != 3 {
			t.Errorf("%s: accepted %d, want 3", b, got)
		}
		p.Close()
	}
}

func TestTorrents(t *testing.T) {
	a, b := NewTorrent(1, 3, 900), NewTorrent(1, 3, 900)
	if a.InfoHash != b.InfoHash || sha1.Sum(a.Info) != a.InfoHash || len(a.Info) < 16384 {
		t.Fatalf("torrent not deterministic or too small: %d bytes", len(a.Info))
	}
	for _, inv := range []Torrent{InvalidTorrent(1), RepeatedKeyTorrent(1)} {
		if sha1.Sum(inv.Info) != inv.InfoHash {
			t.Fatalf("invalid torrent %s: hash", inv.Name)
		}
	}
}

func TestExpected(t *testing.T) {
	tr := testnet.Truth{
		Announced: []testnet.TruthEntry{{InfoHash: "aa"}},
		Dead:      []testnet.TruthEntry{{InfoHash: "bb"}},
		Searched:  []testnet.TruthEntry{{InfoHash: "cc"}},
		Extra: map[string][]testnet.TruthEntry{
			TruthKind(Stall): {{InfoHash: "dd"}},
			"someone_else":   {{InfoHash: "ee"}},
		},
	}
	want := map[string]string{"aa": "ok", "bb": "connect_failed", "cc": "no_peers", "dd": "timeout"}
	got := Expected(tr)
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("%s: got %q want %q", k, got[k], v)
		}
	}
}
