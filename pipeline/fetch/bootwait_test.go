package fetch

import (
	"bytes"
	"context"
	"log/slog"
	"net/netip"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for a logger's writes from several
// goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestBootWaitDebug: with debug records on (--debug), the DHT start says
// when it starts waiting (for the bootstrap routers, or for the saved
// nodes to answer their pings), the routing table's size every tick
// (every second) while it waits, and when and why it stopped waiting: the
// bootstrap finished, timed out, or was cut short (a --deadline), or the
// saved nodes answered. It used to sit silent for up to 15 s. Without
// debug records none of it is logged. No wait here ends by a time a slow
// machine could outlast: the cut comes once the router was asked and (with
// debug records) a tick was logged, not 1.5 s after the start, which had
// to leave room for a 1 s tick; the timeout has no tick to wait for.
func TestBootWaitDebug(t *testing.T) {
	for _, tt := range []struct {
		name   string
		set    func(t *testing.T, o *Options, logs *syncBuffer) context.Context
		wait   time.Duration // bootstrapWait
		msg    string        // the wait's messages start so
		why    string
		ticked bool // a "still waiting" line is expected
	}{
		{"bootstrap finishes", func(t *testing.T, o *Options, _ *syncBuffer) context.Context {
			o.Bootstrap = []string{startSlowNode(t, 0, nil, nil)}
			o.DHTQueryTimeout = backstop // the node answers: a slow machine only delays it
			return context.Background()
		}, bootstrapWait, "fetch: DHT bootstrap", `why="finished: no closer node left to ask"`, false},
		{"bootstrap times out", func(t *testing.T, o *Options, _ *syncBuffer) context.Context {
			o.Bootstrap = []string{silentNode(t).String()}
			o.DHTQueryTimeout = backstop // only the wait's timeout ends the bootstrap
			return context.Background()
		}, 300 * time.Millisecond, "fetch: DHT bootstrap", `why="timeout: 300ms passed"`, false},
		{"bootstrap cut short by the deadline", func(t *testing.T, o *Options, logs *syncBuffer) context.Context {
			router, packets := blackhole(t)
			o.Bootstrap = []string{router}
			o.DHTQueryTimeout = backstop // only the cut ends the bootstrap
			debug := o.Logger.Enabled(context.Background(), slog.LevelDebug)
			ctx, cut := context.WithCancelCause(context.Background())
			t.Cleanup(func() { cut(nil) })
			go func() {
				for ctx.Err() == nil && (packets.Load() == 0 || debug && !strings.Contains(logs.String(), "still waiting")) {
					time.Sleep(time.Millisecond)
				}
				cut(errDeadline)
			}()
			return ctx
		}, backstop, "fetch: DHT bootstrap", `why="cut short: run deadline reached"`, true},
		{"saved nodes answer", func(t *testing.T, o *Options, _ *syncBuffer) context.Context {
			dir := t.TempDir()
			node := netip.MustParseAddrPort(startSlowNode(t, 0, nil, nil))
			if err := saveDHTState(dir, [20]byte{1}, []savedNode{{ID: [20]byte{2}, Addr: node}}, time.Now()); err != nil {
				t.Fatal(err)
			}
			o.DHT, o.DHTState = true, dir
			o.DHTQueryTimeout = backstop // the node answers: a slow machine only delays it
			return context.Background()
		}, bootstrapWait, "fetch: DHT warm start", `why="enough saved nodes answered"`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			defer func(d, tick time.Duration) { bootstrapWait, bootWaitTick = d, tick }(bootstrapWait, bootWaitTick)
			bootstrapWait, bootWaitTick = tt.wait, 10*time.Millisecond
			for _, level := range []slog.Level{slog.LevelDebug, slog.LevelInfo} {
				var logs syncBuffer
				o := testOptions()
				o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: level}))
				ctx := tt.set(t, &o, &logs)
				f, err := NewFetcher(ctx, o)
				if err != nil {
					t.Fatal(err)
				}
				f.Close()
				got := logs.String()
				if level != slog.LevelDebug {
					if strings.Contains(got, "waiting") {
						t.Errorf("without --debug, the wait is logged:\n%s", got)
					}
					continue
				}
				want := []string{`msg="` + tt.msg + `: waiting"`, `msg="` + tt.msg + `: done waiting" ` + tt.why}
				if tt.ticked {
					want = append(want, `msg="`+tt.msg+`: still waiting" nodes=`)
				}
				for _, w := range want {
					if !strings.Contains(got, w) {
						t.Errorf("no %q in the log:\n%s", w, got)
					}
				}
				if n := regexp.MustCompile(`waiting" .*waited=`).FindAllString(got, -1); tt.ticked && len(n) == 0 {
					t.Errorf("no line says how long it waited:\n%s", got)
				}
			}
		})
	}
}
