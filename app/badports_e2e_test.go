package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// TestDedupBadPeerPorts: announce_peer rows whose peer_port is no port
// (70000, -1) are counted in dedup's final line and --stats-json as
// bad_peer_ports, with one warning naming the input and the count; the
// run succeeds (exit 0).
func TestDedupBadPeerPorts(t *testing.T) {
	dir := t.TempDir()
	now := time.Now().UTC().Truncate(time.Second)
	obs := func(k byte, port int32) schema.Observation {
		return schema.Observation{InfoHash: schema.Hash{0xba, k}, HashType: schema.HashV1,
			ObservedAt: now.Add(-time.Minute).UnixMilli(), Source: schema.SourceAnnouncePeer,
			NodeAddr: "127.0.0.1:40001", PeerPort: port, RunID: "e2e"}
	}
	path := filepath.Join(dir, "observations.parquet")
	writeRows(t, path, []schema.Observation{obs(1, 6881), obs(2, 70000), obs(3, -1)})
	stats := filepath.Join(dir, "stats.json")
	r := ih(t, nil, "dedup", "--data", filepath.Join(dir, "ih"), "--announced-peers", "--now", now.Format(time.RFC3339),
		"--stats-json", stats, path)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	var done, warn string
	for _, line := range strings.Split(r.stderr, "\n") {
		switch {
		case strings.Contains(line, `msg="dedup: done"`):
			done = line
		case strings.Contains(line, "level=WARN") && strings.Contains(line, "peer_port"):
			if warn != "" {
				t.Errorf("a second warning: %s", line)
			}
			warn = line
		}
	}
	if !strings.Contains(done, " bad_peer_ports=2 ") {
		t.Errorf("done line %q lacks bad_peer_ports=2", done)
	}
	if !strings.Contains(warn, "input="+path+" bad_peer_ports=2") {
		t.Errorf("warning %q does not name %s and 2", warn, path)
	}
	b, err := os.ReadFile(stats)
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	if st["bad_peer_ports"] != 2.0 {
		t.Errorf("--stats-json bad_peer_ports = %v, want 2:\n%s", st["bad_peer_ports"], b)
	}
}
