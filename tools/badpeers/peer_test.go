package badpeers

import (
	"crypto/sha1"
	"io"
	"net"
	"testing"
	"time"

	"github.com/infohash/infohash/tools/testnet"
)

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
		c, err := net.DialTimeout("tcp", p.Addr(), time.Second)
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
	time.Sleep(50 * time.Millisecond)
	done := make(chan struct{})
	go func() { p.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hung on a stalled connection")
	}
	c.SetReadDeadline(time.Now().Add(time.Second))
	if _, err := io.ReadAll(c); err != nil {
		t.Fatalf("connection not closed by the peer: %v", err)
	}
}

func TestTorrents(t *testing.T) {
	a, b := NewTorrent(1, 3, 900), NewTorrent(1, 3, 900)
	if a.InfoHash != b.InfoHash || sha1.Sum(a.Info) != a.InfoHash || len(a.Info) < 16384 {
		t.Fatalf("torrent not deterministic or too small: %d bytes", len(a.Info))
	}
	inv := InvalidTorrent(1)
	if sha1.Sum(inv.Info) != inv.InfoHash {
		t.Fatal("invalid torrent hash")
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
