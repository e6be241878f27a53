package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// TestExportWholeTables: the leases, the penalised peers and the ledger
// are exported as they stand after plan-retries and a merge, and the hash
// filters and hash-only formats are refused for them.
func TestExportWholeTables(t *testing.T) {
	dir, data := seedDataset(t)
	jobsPath := filepath.Join(dir, "jobs.parquet")
	if _, stderr, code := runMain(t, "plan-retries", "--data", data, "--far-now", "--now", "2026-03-01T00:00:00Z", "-o", jobsPath); code != 0 {
		t.Fatalf("plan-retries: exit %d: %s", code, stderr)
	}
	jobs, err := dataset.ReadFile[schema.Job](jobsPath)
	if err != nil || len(jobs) != 2 {
		t.Fatalf("jobs: %d, %v; want 2", len(jobs), err)
	}
	out, _, code := runMain(t, "export", "--data", data, "--table", "leases", "--format", "csv", "-o", "-")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "info_hash,lease_id,lease_until") {
		t.Fatalf("leases: exit %d:\n%s", code, out)
	}
	for _, j := range jobs {
		if !strings.Contains(out, j.LeaseID) {
			t.Fatalf("leases: lease %s missing:\n%s", j.LeaseID, out)
		}
	}

	// --blocklist (as DIR/blocklist) leaves out the leases of the hashes it
	// lists, as export --help and README say: no other filter applies here.
	bl := filepath.Join(dir, "bl.txt")
	if err := os.WriteFile(bl, []byte(schema.Hex(jobs[0].InfoHash)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code = runMain(t, "export", "--data", data, "--table", "leases", "--format", "csv", "--blocklist", bl, "-o", "-")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); code != 0 || len(lines) != 2 || strings.Contains(out, schema.Hex(jobs[0].InfoHash)) {
		t.Fatalf("leases --blocklist: exit %d, want the one lease of the hash not listed:\n%s", code, out)
	}

	// One job fails at a peer: merge ends its lease and penalises the peer.
	j := jobs[0]
	at := int64(1772323260000) // 2026-03-01T00:01:00Z
	res := filepath.Join(dir, "results.parquet")
	writeRows(t, res, []schema.Result{{InfoHash: j.InfoHash, HashType: j.HashType, Attempt: j.Attempt, LeaseID: j.LeaseID,
		AttemptedAt: at, Outcome: schema.OutcomeConnectFailed, PeersFound: 1, PeersTried: 1,
		PeerFailures: []schema.PeerFailure{{Addr: "127.0.0.1:6881", Class: schema.OutcomeConnectFailed, At: at}}}})
	if _, stderr, code := runMain(t, "merge", "--data", data, "--far-now", "--now", "2026-03-01T00:02:00Z", res); code != 0 {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}

	tests := []struct {
		table, format string
		want          []string // substrings, one per row
		rows          int
	}{
		{"leases", "jsonl", []string{`"lease_id":"` + jobs[1].LeaseID + `"`}, 1},
		{"peers", "jsonl", []string{`"addr":"127.0.0.1:6881"`}, 1},
		{"ledger", "jsonl", []string{`"name":"` + filepath.Join(dir, "h.txt") + `"`, `"name":"` + res + `"`}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.table, func(t *testing.T) {
			out, stderr, code := runMain(t, "export", "--data", data, "--table", tt.table, "--format", tt.format, "-o", "-")
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if code != 0 || len(lines) != tt.rows {
				t.Fatalf("exit %d, %d rows, want %d: %s\n%s", code, len(lines), tt.rows, stderr, out)
			}
			for i, w := range tt.want {
				if !strings.Contains(lines[i], w) {
					t.Fatalf("row %d: %s; want %s", i, lines[i], w)
				}
			}
		})
	}
	pq := filepath.Join(dir, "ledger.parquet")
	if _, stderr, code := runMain(t, "export", "--data", data, "--table", "ledger", "-o", pq); code != 0 {
		t.Fatalf("ledger to Parquet: exit %d: %s", code, stderr)
	}
	if rows, err := dataset.ReadFile[struct {
		ID   string `parquet:"id"`
		Rows int64  `parquet:"rows"`
	}](pq); err != nil || len(rows) != 2 || rows[0].Rows != 2 || rows[1].Rows != 1 {
		t.Fatalf("ledger.parquet: %+v, %v; want 2 entries of 2 and 1 rows", rows, err)
	}

	for _, bad := range [][]string{
		{"--table", "ledger", "--status", "new"},
		{"--table", "peers", "--prefix", "ab"},
		{"--table", "leases", "--format", "magnet"},
		{"--table", "torrents", "--tier", "cold"}, // torrents have no tier: catalog has
	} {
		args := append([]string{"export", "--data", data, "-o", "-"}, bad...)
		if _, stderr, code := runMain(t, args...); code != 2 || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line", bad, code, stderr)
		}
	}
}
