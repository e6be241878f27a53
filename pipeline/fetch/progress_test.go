package fetch

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
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
func TestProgressCountsOK(t *testing.T) {
	tor := badpeers.NewTorrent(41, 1, 5)
	good := startPeer(t, badpeers.Good, tor)
	stall := startPeer(t, badpeers.Stall)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "jobs.parquet"), filepath.Join(dir, "results.parquet")
	other := tor.InfoHash
	other[0] ^= 0xff // no peer has it: its exchanges stall until the peer timeout
	writeRows(t, in, []schema.Job{
		{InfoHash: tor.InfoHash, HashType: schema.HashV1, Attempt: 1, LeaseID: "p", Peers: []string{good.Addr()}},
		{InfoHash: other, HashType: schema.HashV1, Attempt: 1, LeaseID: "p", Peers: []string{stall.Addr()}},
	})
	var logs lockedBuffer
	o := testOptions()
	o.Input, o.Output = in, out
	o.Progress = 20 * time.Millisecond
	o.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	logs.mu.Lock()
	defer logs.mu.Unlock()
	dec := json.NewDecoder(&logs.b)
	seen := 0
	for dec.More() {
		var rec map[string]any
		if err := dec.Decode(&rec); err != nil {
			t.Fatal(err)
		}
		if rec["msg"] != "fetch: progress" || rec["ok"] != 1.0 {
			continue
		}
		seen++
		if r, ok := rec["ok_per_sec"].(float64); !ok || r <= 0 {
			t.Fatalf("progress with 1 ok result has ok_per_sec %v: %v", rec["ok_per_sec"], rec)
		}
	}
	if seen == 0 {
		t.Fatal("no progress line counted the ok result")
	}
}
