package capture

import (
	"bytes"
	"context"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/bencode"
	"github.com/infohash/infohash/formats/krpc"
)

// sampleReply encodes a BEP 51 reply carrying samples, with an interval
// only when interval is not nil (krpc.AppendReply always writes one).
func sampleReply(t, id, samples []byte, interval *int64) []byte {
	var e bencode.Encoder
	e.Dict().Str("r").Dict().Str("id").Bytes(id)
	if interval != nil {
		e.Str("interval").Int(*interval)
	}
	e.Str("num").Int(int64(len(samples) / 20)).Str("samples").Bytes(samples).End()
	e.Str("t").Bytes(t).Str("y").Str("r").End()
	return e.B
}

func ptr(v int64) *int64 { return &v }

// TestRevisitHonoursInterval: a node is sampled again after the interval
// it asks for, clamped to [60 s, 21600 s] for a public node and to
// [1 s, 21600 s] for a loopback or private one (the floor was 1 s for
// all: a public node replying 0 was sampled every second), and after
// 21600 s when it gives none (it used to be 1 s: a node without an
// interval was hammered).
func TestRevisitHonoursInterval(t *testing.T) {
	const (
		loopback = "127.0.0.1:4002"
		private  = "10.1.2.3:6881"
		public   = "198.51.100.7:6881"
	)
	tests := []struct {
		name     string
		from     string
		interval *int64
		want     time.Duration
	}{
		{"absent: BEP 51 maximum, as libtorrent reports by default", loopback, nil, 21600 * time.Second},
		{"absent, public", public, nil, 21600 * time.Second},
		{"zero", loopback, ptr(0), time.Second},
		{"negative", loopback, ptr(-60), time.Second},
		{"one second, as the testnet reports", loopback, ptr(1), time.Second},
		{"one second, private", private, ptr(1), time.Second},
		{"zero, public: the public floor", public, ptr(0), time.Minute},
		{"one second, public", public, ptr(1), time.Minute},
		{"negative, public", public, ptr(-60), time.Minute},
		{"59 s, public", public, ptr(59), time.Minute},
		{"61 s, public", public, ptr(61), 61 * time.Second},
		{"five minutes", loopback, ptr(300), 5 * time.Minute},
		{"five minutes, public", public, ptr(300), 5 * time.Minute},
		{"BEP 51 maximum", loopback, ptr(21600), 21600 * time.Second},
		{"above the maximum", loopback, ptr(86400), 21600 * time.Second},
		{"above the maximum, public", public, ptr(86400), 21600 * time.Second},
		{"largest the decoder takes, would overflow a Duration", public, ptr(999_999_999_999_999_999), 21600 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := fuzzNode(t)
			c := n.r.crawler
			from := netip.MustParseAddrPort(tc.from)
			c.pending[5] = pending{addr: from, sent: time.Now(), kind: kindSample}
			now := time.Now()
			n.handle(sampleReply([]byte{'i', 0, 0, 5}, []byte("remote-node-id-01234"), bytes.Repeat([]byte{1}, 20), tc.interval), from, now)
			if len(n.batch) != 1 || c.remotes[from] == nil || c.remotes[from].state != stateBEP51 {
				t.Fatalf("reply not taken as BEP 51: %d observations, remote %+v", len(n.batch), c.remotes[from])
			}
			if len(c.due) != 1 || c.due[0].addr != from {
				t.Fatalf("due %+v, want %s once", c.due, from)
			}
			if got := c.due[0].at.Sub(now); got != tc.want {
				t.Fatalf("sampled again after %v, want %v", got, tc.want)
			}
		})
	}
}

// responder is a hand-made BEP 51 node on loopback: it answers every
// sample_infohashes with one sample and the given interval (none when
// nil), and ignores everything else.
type responder struct {
	conn     *net.UDPConn
	interval *int64
	mu       sync.Mutex
	at       []time.Time // when each sample_infohashes arrived
}

func startResponder(t *testing.T, interval *int64) *responder {
	t.Helper()
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	r := &responder{conn: conn, interval: interval}
	done := make(chan struct{})
	t.Cleanup(func() { conn.Close(); <-done })
	go func() {
		defer close(done)
		buf := make([]byte, 1<<16)
		for {
			nb, from, err := conn.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			var m krpc.Msg
			if krpc.Parse(buf[:nb], &m) != nil || m.Y != krpc.Query || string(m.Q) != "sample_infohashes" {
				continue
			}
			r.mu.Lock()
			r.at = append(r.at, time.Now())
			r.mu.Unlock()
			conn.WriteToUDPAddrPort(sampleReply(m.T, []byte("responder-id-0123456"), hashN(1), r.interval), from)
		}
	}()
	return r
}

func (r *responder) queries() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Time(nil), r.at...)
}

// waitFor polls cond every 10 ms until it holds or hangGuard passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(hangGuard); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestCrawlerRevisitsOnLoopback runs capture against a responder: one
// that gives no interval is sampled once (capture used to ask it again
// every second), one that asks for 1 s is sampled again, not sooner.
// The run that checks the first has a second responder, asking for 1 s,
// as its clock: by its third sample the old crawler had asked the first
// twice more, however slow the machine (a fixed 3 s wait was the window;
// on a loaded machine it could pass with no revisit due yet).
func TestCrawlerRevisitsOnLoopback(t *testing.T) {
	tests := []struct {
		name     string
		interval *int64
	}{{"no interval", nil}, {"interval 1", ptr(1)}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := startResponder(t, tc.interval)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			o := testOptions()
			o.Bootstrap = []string{resp.conn.LocalAddr().String()}
			var clock *responder
			if tc.interval == nil {
				clock = startResponder(t, ptr(1))
				o.Bootstrap = append(o.Bootstrap, clock.conn.LocalAddr().String())
			}
			sink := &memSink{}
			_, wait := runAsync(t, ctx, o, sink)
			if clock != nil {
				waitFor(t, "three samples of the clock responder", func() bool { return len(clock.queries()) >= 3 })
			} else {
				waitFor(t, "a second sample_infohashes", func() bool { return len(resp.queries()) >= 2 })
			}
			cancel()
			st, _ := wait()
			q := resp.queries()
			switch {
			case tc.interval == nil && (len(q) != 1 || st.SampleQueries != int64(1+len(clock.queries()))):
				t.Fatalf("sampled %d times (%d sent, %d to the clock), want once: the node gave no interval",
					len(q), st.SampleQueries, len(clock.queries()))
			case tc.interval != nil && q[1].Sub(q[0]) < time.Duration(*tc.interval)*time.Second:
				t.Fatalf("sampled again after %v, before the %d s interval", q[1].Sub(q[0]), *tc.interval)
			}
		})
	}
}
