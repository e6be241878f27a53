package fetch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/tools/badpeers"
)

// lockedBuffer is a bytes.Buffer safe for the progress goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// TestProgressCountsOK: the progress line counts ok results, with a rate
// that keeps its fraction. It used to log "verified" (info dictionaries
// whose hash matched, ok or not) and a rate cut to a whole number, so a
// slow swarm's 0.4 ok/s read 0.
//
// The run ends (its deadline passed by the test) once a progress line
// counts the good job's attempt and comes at least 2 s into the run,
// where one ok result is under 0.5 ok/s: no later, so no progress line
// needs to fall inside a run of fixed length (the stalled job's 3 s),
// and the run's length bounds no exchange.
func TestProgressCountsOK(t *testing.T) {
	tor := badpeers.NewTorrent(41, 1, 5)
	good := startPeer(t, badpeers.Good, tor)
	stall := startPeer(t, badpeers.Stall)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "jobs.parquet"), filepath.Join(dir, "results.parquet")
	other := tor.InfoHash
	other[0] ^= 0xff // no peer has it: its exchange stalls until the run ends
	writeRows(t, in, []schema.Job{
		{InfoHash: tor.InfoHash, HashType: schema.HashV1, Attempt: 1, LeaseID: "p", Peers: []string{good.Addr()}},
		{InfoHash: other, HashType: schema.HashV1, Attempt: 1, LeaseID: "p", Peers: []string{stall.Addr()}},
	})
	var logs lockedBuffer
	o := testOptions()
	o.Input, o.Output = in, out
	o.PeerTimeout = backstop // only the test's deadline ends the stall
	o.Progress = 20 * time.Millisecond
	o.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	const slow = 2 * time.Second // 1 ok result in it is under 0.5 ok/s
	start := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o.passDeadline = func(pass func()) {
		go func() {
			for ctx.Err() == nil && len(progressLines(t, &logs, start.Add(slow))) == 0 {
				time.Sleep(time.Millisecond)
			}
			pass()
		}()
	}
	if _, err := Run(ctx, o); exitcode.Of(err) != exitcode.Partial {
		t.Fatalf("err %v, want partial (the stalled job released at the deadline)", err)
	}
	all := progressLines(t, &logs, start)
	if len(progressLines(t, &logs, start.Add(slow))) == 0 {
		t.Fatalf("no progress line counted the good job's attempt %v into the run; lines: %v", slow, all)
	}
	for _, rec := range all {
		if rec["ok"] != 1.0 {
			t.Fatalf("progress with the good job's attempt counts %v ok: %v", rec["ok"], rec)
		}
		if r, ok := rec["ok_per_sec"].(float64); !ok || r <= 0 {
			t.Fatalf("progress with 1 ok result has ok_per_sec %v: %v", rec["ok_per_sec"], rec)
		}
	}
}

// progressLines returns the progress lines in logs that count an attempt
// and were logged at or after since.
func progressLines(t *testing.T, logs *lockedBuffer, since time.Time) []map[string]any {
	t.Helper()
	logs.mu.Lock()
	defer logs.mu.Unlock()
	dec := json.NewDecoder(bytes.NewReader(logs.b.Bytes()))
	var lines []map[string]any
	for dec.More() {
		var rec map[string]any
		if err := dec.Decode(&rec); err != nil {
			t.Error(err)
			return nil
		}
		at, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(rec["time"]))
		if rec["msg"] == "fetch: progress" && rec["attempted"] != 0.0 && !at.Before(since) {
			lines = append(lines, rec)
		}
	}
	return lines
}
