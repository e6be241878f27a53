package capture

import (
	"context"
	"net/netip"
	"slices"
	"testing"
	"time"
)

// TestIntervalHoldsAcrossRuns: a BEP 51 node that asked not to be sampled
// for an hour is not sampled again by the next run on the same
// --dht-state (a cron capture every 15 minutes used to sample every node
// it had saved at each start: 24 times in the 6 h libtorrent asks for,
// each time recording the same samples again). One that asked for 1 s is.
func TestIntervalHoldsAcrossRuns(t *testing.T) {
	tests := []struct {
		name     string
		interval int64
		again    bool
	}{{"an hour", 3600, false}, {"one second", 1, true}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := startResponder(t, ptr(tt.interval))
			dir := t.TempDir()
			// run captures from resp and the others until until holds.
			run := func(until func() bool, others ...*responder) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				o := testOptions()
				o.StateDir = dir
				o.Bootstrap = []string{resp.conn.LocalAddr().String()}
				for _, r := range others {
					o.Bootstrap = append(o.Bootstrap, r.conn.LocalAddr().String())
				}
				_, wait := runAsync(t, ctx, o, &memSink{})
				waitFor(t, "a sample_infohashes", until)
				cancel()
				wait()
			}
			run(func() bool { return len(resp.queries()) >= 1 })
			if tt.again {
				time.Sleep(1100 * time.Millisecond)
				run(func() bool { return len(resp.queries()) >= 2 })
				return
			}
			// A responder that asks for 1 s times the second run: by its
			// second sample, one that does not hold the interval has asked
			// resp at its start, however slow the machine (a fixed 3 s
			// run was the window).
			clock := startResponder(t, ptr(1))
			run(func() bool { return len(clock.queries()) >= 2 }, clock)
			if q := resp.queries(); len(q) != 1 {
				t.Fatalf("sampled %d times over two runs, want once: it asked for %d s", len(q), tt.interval)
			}
		})
	}
}

// TestRestingRoundTrip: what one run saves of a node's interval, the next
// takes in: the node waits in the due queue until then (at most BEP 51's
// maximum from now), and is not queued when listed again; an interval
// that has ended, or an entry that does not parse, is left to the walk.
func TestRestingRoundTrip(t *testing.T) {
	n := fuzzNode(t)
	c := n.r.crawler
	now := time.Now()
	from := netip.MustParseAddrPort("198.51.100.7:6881")
	c.pending[21] = pending{addr: from, sent: now, kind: kindSample}
	n.handle(sampleReply([]byte{'i', 0, 0, 21}, []byte("remote-node-id-01234"), nil, ptr(3600)), from, now)
	saved := c.resting(now, 10)
	if len(saved) != 1 || saved[0].Addr != from.String() || saved[0].Until < now.Add(time.Hour).Unix() {
		t.Fatalf("resting %+v, want %s until an hour from now", saved, from)
	}
	saved = append(saved,
		restingEntry{ID: saved[0].ID, Addr: "198.51.100.8:6881", Until: now.Add(-time.Second).Unix()},      // ended
		restingEntry{ID: "zz", Addr: "198.51.100.9:6881", Until: now.Add(time.Hour).Unix()},                // bad ID
		restingEntry{ID: saved[0].ID, Addr: "198.51.100.10:6881", Until: now.Add(1000 * time.Hour).Unix()}) // past BEP 51's maximum

	next := fuzzNode(t).r.crawler
	next.rest(saved, now)
	next.addAll([]contact{{Addr: from}, {Addr: netip.MustParseAddrPort("198.51.100.8:6881")}})
	var due []string
	for _, d := range next.due {
		due = append(due, d.addr.String())
		if w := d.at.Sub(now); w < 59*time.Minute || w > maxRevisit {
			t.Errorf("%s due in %v, want an hour to 6 h", d.addr, w)
		}
	}
	slices.Sort(due)
	if want := []string{"198.51.100.10:6881", "198.51.100.7:6881"}; !slices.Equal(due, want) {
		t.Errorf("due %v, want %v", due, want)
	}
	if len(next.fresh) != 1 || next.fresh[0].String() != "198.51.100.8:6881" {
		t.Errorf("fresh %v, want only the node whose interval ended", next.fresh)
	}
}
