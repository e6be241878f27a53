package capture

import (
	"context"
	"encoding/hex"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/krpc"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/tools/testnet"
)

// dropper is a UDP socket on loopback that reads every packet and
// answers none: a router or node in an outage. It counts what it read.
func dropper(t *testing.T) (addr string, read *atomic.Int64) {
	t.Helper()
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	read = new(atomic.Int64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 1<<16)
		for {
			if _, _, err := c.ReadFrom(buf); err != nil {
				return
			}
			read.Add(1)
		}
	}()
	t.Cleanup(func() { c.Close(); <-done })
	return c.LocalAddr().String(), read
}

// TestSilentDHTIsPartial: a run that asked a router (--bootstrap) or a
// saved node to let it in, and heard no DHT message for its whole
// --duration (no reply, no query), ends partial (exit 3) saying why, as
// fetch does in an outage: it used to end as a quiet pass (exit 0), and
// cron counted it a success. A run that heard a query, one whose router
// answered, and one with nobody to ask (--bootstrap "" and no saved
// node) end as before.
func TestSilentDHTIsPartial(t *testing.T) {
	tn := startTestnet(t, testnet.Config{Seed: 7, Nodes: 8, Torrents: 4})
	for _, tt := range []struct {
		name    string
		boot    bool // --bootstrap: the dropper
		saved   bool // the --dht-state holds the dropper as a saved node
		live    bool // --bootstrap: the testnet
		queried bool // a node sends the run a ping
		passive bool
		partial bool
	}{
		{name: "silent router", boot: true, partial: true},
		{name: "silent router, passive", boot: true, passive: true, partial: true},
		{name: "silent saved node", saved: true, partial: true},
		{name: "silent router, a query came in", boot: true, queried: true},
		{name: "router answered", live: true},
		{name: "nobody to ask"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			addr, read := dropper(t)
			o := testOptions()
			o.Crawl, o.MaxRPS, o.Duration = !tt.passive, 100, 2*time.Second
			switch {
			case tt.boot:
				o.Bootstrap = []string{addr}
			case tt.live:
				o.Bootstrap = tn.Truth().Bootstrap
			}
			if tt.saved {
				o.StateDir = t.TempDir()
				id := [20]byte{0x80}
				c := contact{ID: [20]byte{0x81}, Addr: mustAddrPort(addr)}
				if err := saveState(o.StateDir, state{Nodes: []stateNode{{ID: hex.EncodeToString(id[:]), Table: toState([]contact{c})}}}); err != nil {
					t.Fatal(err)
				}
			}
			addrs, wait := runAsync(t, context.Background(), o, &memSink{})
			if tt.queried {
				replies(t, sendAll(t, addrs[0], krpc.AppendPing(nil, []byte("p1"), peerID)), 1)
			}
			st, err := wait()
			if st.StopReason != StopDuration {
				t.Errorf("stop reason %q, want %q", st.StopReason, StopDuration)
			}
			if !tt.partial {
				if err != nil {
					t.Fatalf("error %v (exit %d), want none", err, exitcode.Of(err))
				}
				return
			}
			want := "capture: no DHT node answered the bootstrap (check the network and --bootstrap), nor sent a query, in 2s: nothing captured: partial"
			if !errors.Is(err, exitcode.ErrPartial) || exitcode.Of(err) != exitcode.Partial || err.Error() != want {
				t.Fatalf("error %v (exit %d), want %q (exit 3)", err, exitcode.Of(err), want)
			}
			if read.Load() == 0 || st.Responses != 0 || st.Observations != 0 {
				t.Errorf("the dropper read %d packets, responses_in %d, %d observations; want some, 0, 0",
					read.Load(), st.Responses, st.Observations)
			}
		})
	}
}

// TestSilentInterruptedIsInterrupted: a silent run stopped by a signal
// ends interrupted (130), not partial: the signal is what the caller
// asked for.
func TestSilentInterruptedIsInterrupted(t *testing.T) {
	addr, read := dropper(t)
	o := testOptions()
	o.Bootstrap, o.Duration = []string{addr}, 0
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, wait := runAsync(t, ctx, o, &memSink{})
	waitFor(t, "the router asked", func() bool { return read.Load() > 0 })
	cancel()
	st, err := wait()
	if exitcode.Of(err) != exitcode.Interrupted || errors.Is(err, exitcode.ErrPartial) || strings.Contains(err.Error(), "answered") {
		t.Fatalf("error %v (exit %d, stop %q), want interrupted", err, exitcode.Of(err), st.StopReason)
	}
}
