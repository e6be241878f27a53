package app

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestFetchLookupsAreNoSighting runs the real binary on loopback: a
// capture and a fetch share one --dht-state, and the fetch (a first run:
// no saved state) looks a hash nobody has up through the capture's node.
// Its get_peers queries are the crawler's own: capture leaves them out
// (fetch_lookups_skipped), so dedup of capture's output neither counts
// them as sightings nor reactivates the hash the fetch just failed.
func TestFetchLookupsAreNoSighting(t *testing.T) {
	bin := infohashBinary(t)
	dir := t.TempDir()
	data, state := filepath.Join(dir, "data"), filepath.Join(dir, "state")
	const hash = "0123456789abcdef0123456789abcdef01234567"
	list := filepath.Join(dir, "hashes.txt")
	if err := os.WriteFile(list, []byte(hash+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runBin(t, bin, 0, "dedup", "--data", data, list)
	runBin(t, bin, 0, "policy", "set", "--data", data, "backoff.no_peers=1d,2d", "reactivation.spread=0s")

	addr := freeUDPPort(t)
	obs, captureStats := filepath.Join(dir, "obs.parquet"), filepath.Join(dir, "capture.json")
	capture, captureErr := fedCapture(t, bin, addr, "--node-ids", "1", "--dht-state", state, "--duration", "2m",
		"-o", obs, "--stats-json", captureStats)

	jobs, results := filepath.Join(dir, "jobs.parquet"), filepath.Join(dir, "results.parquet")
	runBin(t, bin, 0, "plan-retries", "--data", data, "--limit", "10", "-o", jobs)
	// capture's node is the fetch's only DHT contact: every lookup asks it.
	runBin(t, bin, 0, "fetch", jobs, "-o", results, "--bootstrap", addr, "--dht-listen", "127.0.0.1:0",
		"--dht-state", state, "--timeout", "10s")
	runBin(t, bin, 0, "merge", "--data", data, results)
	before := stateRow(t, bin, data, hash)
	if before.LastFailure != "no_peers" {
		t.Fatalf("after the fetch: %+v; want it failed with no_peers (a lookup that asked capture's node)", before)
	}

	capture.Process.Signal(syscall.SIGINT)
	if err := captureErr.wait(capture); exitCode(err) != 130 {
		t.Fatalf("capture: %v\n%s", err, captureErr.String())
	}
	var cs struct {
		Queries map[string]int64 `json:"queries_by_method"`
		Skipped int64            `json:"fetch_lookups_skipped"`
		Repeats int64            `json:"repeats_dropped"`
	}
	readJSONFile(t, captureStats, &cs)
	// A query the fetch's node sent again (anacrolix resends one whose
	// reply is slow) is a repeat of its sender's: dropped before the
	// writer could skip it.
	if cs.Skipped == 0 || cs.Skipped+cs.Repeats != cs.Queries["get_peers"] {
		t.Errorf("capture's stats: get_peers %d, fetch_lookups_skipped %d, repeats_dropped %d; want every get_peers (fetch's) skipped or a repeat, at least one skipped",
			cs.Queries["get_peers"], cs.Skipped, cs.Repeats)
	}

	dedupStats := filepath.Join(dir, "dedup.json")
	runBin(t, bin, 0, "dedup", "--data", data, obs, "--stats-json", dedupStats)
	var ds struct {
		Reactivated int64 `json:"reactivated"`
	}
	readJSONFile(t, dedupStats, &ds)
	after := stateRow(t, bin, data, hash)
	if ds.Reactivated != 0 || after.ReactivatedAt != nil || after.NextRetry != before.NextRetry || after.SeenCount != before.SeenCount {
		t.Errorf("fetch's own lookups reactivated the hash: dedup reactivated %d; state %+v, before %+v", ds.Reactivated, after, before)
	}
}

// exportedRow is a state row as export writes it in JSON Lines (the
// columns the test reads).
type exportedRow struct {
	LastFailure   string  `json:"last_failure"`
	NextRetry     string  `json:"next_retry"`
	ReactivatedAt *string `json:"reactivated_at"`
	SeenCount     int64   `json:"seen_count"`
}

// stateRow is hash's row of data's state.
func stateRow(t *testing.T, bin, data, hash string) exportedRow {
	t.Helper()
	out := runBin(t, bin, 0, "export", "--data", data, "--table", "state", "--format", "jsonl", "-o", "-")
	for _, line := range bytes.Split([]byte(out), []byte("\n")) {
		var r struct {
			InfoHash string `json:"info_hash"`
			exportedRow
		}
		if len(line) > 0 && json.Unmarshal(line, &r) == nil && r.InfoHash == hash {
			return r.exportedRow
		}
	}
	t.Fatalf("no row of %s in the state:\n%s", hash, out)
	return exportedRow{}
}

func readJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
