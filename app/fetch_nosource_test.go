package app

import (
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestFetchNoPeerSource: a fetch with no DHT node and no --peer warns
// once, before its attempts, that a job without peers of its own ends
// local_error, and such a job does ("no peer source", which merge holds
// against no hash); it was no_peers, which merge counts as an attempt
// and backs the hash off for. With a --peer (one that refuses) there is
// a peer source: no warning, and the peer's failure is the outcome.
func TestFetchNoPeerSource(t *testing.T) {
	refused := refusingAddr(t)
	const warning = "without --peer: only the jobs' own peers are tried"
	for _, tt := range []struct {
		name     string
		flags    []string
		warnings int
		want     string
		detail   string
	}{
		{"--no-dht", []string{"--no-dht"}, 1, schema.OutcomeLocalError,
			"no peer source: --no-dht, no --peer, and the job has no peers"},
		{`--bootstrap ""`, []string{"--bootstrap", ""}, 1, schema.OutcomeLocalError,
			`no peer source: --bootstrap "" without --dht-state, no --peer, and the job has no peers`},
		{"--no-dht --peer", []string{"--no-dht", "--peer", refused}, 0, schema.OutcomeConnectFailed, refused},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			jobs, out := filepath.Join(dir, "jobs.parquet"), filepath.Join(dir, "results.parquet")
			writeJobs(t, jobs, []schema.Job{{InfoHash: schema.Hash{0x5e, 1}, HashType: schema.HashV1, Attempt: 1, LeaseID: "L"}})
			_, stderr, code := runMain(t, append([]string{"fetch", jobs, "-o", out, "--connect-timeout", "5s"}, tt.flags...)...)
			if code != 0 {
				t.Fatalf("exit %d:\n%s", code, stderr)
			}
			if n := strings.Count(stderr, warning); n != tt.warnings {
				t.Errorf("%d warnings %q, want %d:\n%s", n, warning, tt.warnings, stderr)
			}
			res := readRows[schema.Result](t, out)
			if len(res) != 1 || res[0].Outcome != tt.want || !strings.Contains(res[0].Detail, tt.detail) {
				t.Fatalf("results %+v; want one %s (%q)", res, tt.want, tt.detail)
			}
		})
	}
}

// refusingAddr is a loopback TCP endpoint that refuses connections: a
// --peer that is a peer source and finds nothing (connect_failed).
func refusingAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
