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

// portRow is an announce_peer observation whose peer_port is a P, as
// another tool may write it (a BIGINT, a DOUBLE).
type portRow[P int64 | float64] struct {
	InfoHash   schema.Hash `parquet:"info_hash"`
	ObservedAt int64       `parquet:"observed_at,timestamp(millisecond)"`
	Source     string      `parquet:"source"`
	NodeAddr   string      `parquet:"node_addr"`
	PeerPort   P           `parquet:"peer_port"`
}

// portFile writes two announce_peer rows by 127.0.0.1 at path, the
// second's peer_port a P of port (the first's 6881).
func portFile[P int64 | float64](port P) func(t *testing.T, path string) {
	return func(t *testing.T, path string) {
		at := time.Now().Add(-time.Minute).UnixMilli()
		writeRows(t, path, []portRow[P]{
			{InfoHash: schema.Hash{0xbb, 1}, ObservedAt: at, Source: schema.SourceAnnouncePeer, NodeAddr: "127.0.0.1:1", PeerPort: 6881},
			{InfoHash: schema.Hash{0xbb, 2}, ObservedAt: at, Source: schema.SourceAnnouncePeer, NodeAddr: "127.0.0.1:1", PeerPort: port},
		})
	}
}

// TestDedupPeerPortTypes: a BIGINT peer_port past int32 (2^40, or
// 2^32+6881, whose low bits are a port) is a bad port like 70000: exit 0,
// counted, both observations kept (it failed the run, exit 2). A DOUBLE
// one is, with --announced-peers, the wrong schema: exit 2 and one line
// naming the file, the column and its type (it was silently not read);
// without, it is not read (exit 0, nothing counted).
func TestDedupPeerPortTypes(t *testing.T) {
	tests := []struct {
		name  string
		write func(t *testing.T, path string)
		peers bool     // --announced-peers
		code  int      // the exit status
		want  []string // in the done line (exit 0), or the one line naming the file (exit 2)
	}{
		{"BIGINT 2^40", portFile[int64](1 << 40), true, 0, []string{" observations=2 ", " bad_peer_ports=1 "}},
		{"BIGINT 2^32+6881", portFile[int64](1<<32 + 6881), true, 0, []string{" observations=2 ", " bad_peer_ports=1 "}},
		{"DOUBLE", portFile[float64](6881), true, 2,
			[]string{`wrong schema: column "peer_port" is DOUBLE, want an integer (a port)`}},
		{"DOUBLE without --announced-peers", portFile[float64](6881), false, 0,
			[]string{" observations=2 ", " bad_peer_ports=0 "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "observations.parquet")
			tt.write(t, path)
			args := []string{"dedup", "--data", filepath.Join(dir, "ih"), path}
			if tt.peers {
				args = append(args, "--announced-peers")
			}
			r := ih(t, nil, args...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, tt.code, r.stderr)
			}
			var lines []string
			for _, line := range strings.Split(r.stderr, "\n") {
				if tt.code == 0 && strings.Contains(line, `msg="dedup: done"`) || tt.code != 0 && strings.Contains(line, path) {
					lines = append(lines, line)
				}
			}
			if len(lines) != 1 {
				t.Fatalf("want one line, got %q; stderr:\n%s", lines, r.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(lines[0], w) {
					t.Errorf("line %q lacks %q", lines[0], w)
				}
			}
		})
	}
}
