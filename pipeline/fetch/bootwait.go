package fetch

import (
	"context"
	"log/slog"
	"time"

	"github.com/anacrolix/dht/v2"
)

// bootstrapWait bounds how long startDHT waits for a cold bootstrap to
// fill the routing table (a variable for tests).
var bootstrapWait = 15 * time.Second

// bootWaitTick is how often a wait for the DHT logs the routing table's
// size while it lasts (a variable for tests).
var bootWaitTick = time.Second

// bootWait logs at debug level (--debug) a wait of startDHT for the DHT:
// the pings of the saved nodes, or the bootstrap through the routers.
// It says when the wait starts, the routing table's size every second
// while it lasts, and when it ends and why, so that a run that sits
// silent for up to bootstrapWait before its first job shows what it
// waits for. Without debug records it does nothing (a nil *bootWait).
type bootWait struct {
	log   *slog.Logger
	s     *dht.Server
	msg   string // "fetch: DHT bootstrap", "fetch: DHT warm start"
	start time.Time
	stop  chan struct{}
	done  chan struct{}
}

// startBootWait logs the start of a wait (msg, then attrs) and starts
// the per-second lines.
func startBootWait(log *slog.Logger, s *dht.Server, msg string, attrs ...any) *bootWait {
	if log == nil || !log.Enabled(context.Background(), slog.LevelDebug) {
		return nil
	}
	w := &bootWait{log: log, s: s, msg: msg, start: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	log.Debug(msg+": waiting", append(attrs, "nodes", s.NumNodes())...)
	go func() {
		defer close(w.done)
		t := time.NewTicker(bootWaitTick)
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-t.C:
				log.Debug(msg+": still waiting", "nodes", s.NumNodes(), "waited", w.waited())
			}
		}
	}()
	return w
}

func (w *bootWait) waited() string { return time.Since(w.start).Round(time.Millisecond).String() }

// end stops the per-second lines and logs the end of the wait and why.
func (w *bootWait) end(why string, attrs ...any) {
	if w == nil {
		return
	}
	close(w.stop)
	<-w.done
	w.log.Debug(w.msg+": done waiting", append([]any{"why", why, "nodes", w.s.NumNodes(), "waited", w.waited()}, attrs...)...)
}

// bootstrapEnd says why BootstrapContext(bctx) returned ts and err, bctx
// being ctx bounded by bootstrapWait.
func bootstrapEnd(ctx, bctx context.Context, ts dht.TraversalStats, err error) string {
	switch {
	case err == nil && ts.NumResponses == 0:
		return "finished: no router or node answered"
	case err == nil:
		return "finished: no closer node left to ask"
	case ctx.Err() != nil:
		return "cut short: " + context.Cause(ctx).Error()
	case bctx.Err() != nil:
		return "timeout: " + bootstrapWait.String() + " passed"
	}
	return "failed: " + err.Error()
}
