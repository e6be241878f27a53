package fetch

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// TestDeadlineCoversBootstrap: the run's deadline covers its start: one
// that passes during a DHT bootstrap that cannot finish (a router that
// never answers) cuts the bootstrap short, and the run ends partial with
// its leased job released, never attempted.
func TestDeadlineCoversBootstrap(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "jobs.parquet"), filepath.Join(dir, "out.parquet")
	job := schema.Job{InfoHash: schema.Hash{0xde, 0xad}, HashType: schema.HashV1, Attempt: 1, LeaseID: "L1",
		LeaseUntil: time.Now().Add(time.Hour).UnixMilli()}
	writeRows(t, in, []schema.Job{job})
	router, packets := blackhole(t)
	var logs bytes.Buffer
	o := testOptions()
	o.DHT, o.Bootstrap = true, []string{router}
	// The bootstrap may end only by the deadline: the router's query
	// never times out (the library's own timeout ended the bootstrap
	// after about 2 s), nor does the wait for it. The deadline passes
	// once the router has been asked, not after a time (200 ms, then
	// 3 s) that a loaded machine could spend before its first query.
	o.DHTQueryTimeout = backstop
	defer func(d time.Duration) { bootstrapWait = d }(bootstrapWait)
	bootstrapWait = backstop
	o.Input, o.Output = in, out
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o.passDeadline = func(pass func()) {
		go func() {
			for packets.Load() == 0 && ctx.Err() == nil {
				time.Sleep(time.Millisecond)
			}
			pass()
		}()
	}
	o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	st, err := Run(ctx, o)
	if exitcode.Of(err) != exitcode.Partial {
		t.Fatalf("err %v (exit %d), want exit %d", err, exitcode.Of(err), exitcode.Partial)
	}
	if packets.Load() == 0 {
		t.Fatal("the router was not asked: no bootstrap to cut short")
	}
	if !strings.Contains(logs.String(), "DHT bootstrap cut short") {
		t.Errorf("the bootstrap was not cut short by the deadline; logs:\n%s", logs.String())
	}
	if st.Attempted != 0 || st.Released != 1 {
		t.Errorf("attempted %d, released %d; want 0 and 1", st.Attempted, st.Released)
	}
	if r, ok := readResults(t, out)[job.InfoHash]; !ok || r.Outcome != schema.OutcomeReleased {
		t.Errorf("the job's row: %+v (%v), want released", r, ok)
	}
}
