package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// TestDebugAddsDetail: --debug, which README promises for every command,
// adds the records each command keeps for it, and a run without it logs
// none. Only dedup had any: status, export, plan-retries, fetch, capture,
// merge and policy logged none.
func TestDebugAddsDetail(t *testing.T) {
	const now = "2026-03-01T00:00:00Z"
	tests := []struct {
		name string
		want []string // messages of DEBUG records
		// setup returns a fresh run's stdin and arguments.
		setup func(t *testing.T) ([]byte, []string)
	}{
		{"capture", []string{"capture: node"}, func(t *testing.T) ([]byte, []string) {
			return nil, []string{"capture", "--bootstrap", "", "--dht-listen", "127.0.0.1:0", "--duration", "200ms",
				"-o", filepath.Join(t.TempDir(), "obs.parquet")}
		}},
		// The checksums are computed alongside the first read, and the
		// lines say so: "inputs checksummed" read as a step before it.
		{"dedup", []string{"dedup: inputs checksummed alongside the read", "dedup: inputs aggregated alongside checksumming", "dedup: committed"}, func(t *testing.T) ([]byte, []string) {
			_, data := seedDataset(t)
			return []byte("00112233445566778899aabbccddeeff00112233\n"), []string{"dedup", "--data", data, "--far-now", "--now", now, "-"}
		}},
		{"plan-retries", []string{"plan-retries: planned", "plan-retries: commit", "plan-retries: deliver"}, func(t *testing.T) ([]byte, []string) {
			dir, data := seedDataset(t)
			return nil, []string{"plan-retries", "--data", data, "--far-now", "--now", now, "-o", filepath.Join(dir, "jobs.parquet")}
		}},
		{"fetch", []string{"fetch: attempt"}, func(t *testing.T) ([]byte, []string) {
			// Port 1 on loopback refuses at once: a connect_failed attempt.
			return []byte("0123456789abcdef0123456789abcdef01234567\n"), []string{"fetch", "--no-dht", "--peer", "127.0.0.1:1",
				"--timeout", "10s", "-o", filepath.Join(t.TempDir(), "results.parquet"), "-"}
		}},
		{"merge", []string{"merge: read input", "merge: applied", "merge: commit"}, func(t *testing.T) ([]byte, []string) {
			_, data := seedDataset(t)
			h, _, _, err := schema.ParseHex("0123456789abcdef0123456789abcdef01234567")
			if err != nil {
				t.Fatal(err)
			}
			at := time.Date(2026, 3, 1, 0, 30, 0, 0, time.UTC).UnixMilli()
			rs := []schema.Result{{InfoHash: h, HashType: schema.HashV1, AttemptedAt: at, Outcome: schema.OutcomeNoPeers,
				PeerFailures: []schema.PeerFailure{}}}
			return resultsArrow(t, rs), []string{"merge", "--data", data, "--far-now", "--now", "2026-03-01T01:00:00Z", "-"}
		}},
		{"export", []string{"export: partitions written", "export: snapshot exported"}, func(t *testing.T) ([]byte, []string) {
			dir, data := seedDataset(t)
			return nil, []string{"export", "--data", data, "--format", "csv", "-o", filepath.Join(dir, "state.csv")}
		}},
		{"status", []string{"status: read snapshot"}, func(t *testing.T) ([]byte, []string) {
			_, data := seedDataset(t)
			return nil, []string{"status", "--data", data, "--far-now", "--now", now}
		}},
		{"policy show", []string{"policy show: read"}, func(t *testing.T) ([]byte, []string) {
			_, data := seedDataset(t)
			return nil, []string{"policy", "show", "--data", data}
		}},
		{"policy set", []string{"policy set: read"}, func(t *testing.T) ([]byte, []string) {
			_, data := seedDataset(t)
			return nil, []string{"policy", "set", "--data", data, "jitter=0.1"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, debug := range []bool{false, true} {
				stdin, args := tt.setup(t)
				if debug {
					args = append(args, "--debug")
				}
				_, stderr, code := runMainIn(t, stdin, args...)
				if code != 0 {
					t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, stderr)
				}
				if !debug {
					if strings.Contains(stderr, "level=DEBUG") {
						t.Errorf("without --debug, DEBUG records:\n%s", stderr)
					}
					continue
				}
				for _, msg := range tt.want {
					if !strings.Contains(stderr, `level=DEBUG msg="`+msg+`"`) {
						t.Errorf("--debug logged no %q record:\n%s", msg, stderr)
					}
				}
			}
		})
	}
}

// TestDebugJSON: with --log-format json, --debug's records are JSON
// records like the others (fetch's attempt: its counts as numbers).
func TestDebugJSON(t *testing.T) {
	list := filepath.Join(t.TempDir(), "hashes.txt")
	if err := os.WriteFile(list, []byte("0123456789abcdef0123456789abcdef01234567\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runMain(t, "fetch", "--no-dht", "--peer", "127.0.0.1:1", "--timeout", "10s",
		"-o", filepath.Join(t.TempDir(), "results.parquet"), "--log-format", "json", "--debug", list)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rec := doneRecord(t, stderr, "fetch: attempt")
	if rec["level"] != "DEBUG" || rec["outcome"] != schema.OutcomeConnectFailed || rec["peers_tried"] != 1.0 {
		t.Fatalf("record %v, want a DEBUG connect_failed attempt with 1 peer tried", rec)
	}
}
