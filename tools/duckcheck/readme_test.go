package duckcheck

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// readmeQueries returns the statements of README's "Reading it with
// DuckDB" block, with DIR replaced by data.
func readmeQueries(t *testing.T, data string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "### Reading it with DuckDB\n\n```sql\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("README has no SQL block under \"Reading it with DuckDB\"")
	}
	var out []string
	for _, q := range strings.Split(block, "\n\n") { // a blank line between statements
		if q = strings.TrimSuffix(strings.TrimSpace(q), ";"); q != "" {
			out = append(out, strings.ReplaceAll(q, "DIR", data))
		}
	}
	return out
}

// writeResults writes fetch results for jobs, each with outcome.
func writeResults(t *testing.T, path string, jobs []schema.Job, outcome string) {
	t.Helper()
	results := make([]schema.Result, len(jobs))
	for i, j := range jobs {
		results[i] = schema.Result{InfoHash: j.InfoHash, HashType: j.HashType, Attempt: j.Attempt,
			LeaseID: j.LeaseID, AttemptedAt: time.Now().UnixMilli(), Outcome: outcome}
	}
	w, err := rowio.Create[schema.Result](path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(results); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// addTorrent commits a torrents row for h to dataset data.
func addTorrent(t *testing.T, data string, h schema.Hash) {
	t.Helper()
	ctx := context.Background()
	d, err := dataset.Open(ctx, data, dataset.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	key := fmt.Sprintf("%02x", h[0])
	fi, err := dataset.WriteStaged(tx, dataset.TableTorrents, key, []schema.Torrent{{InfoHash: h, HashType: schema.HashV1,
		FetchedAt: time.Now().UnixMilli(), MetadataSize: 1, Meta: schema.Meta{Name: new("t"), NameRaw: []byte("t"), NameUTF8Valid: true}}})
	if err != nil {
		t.Fatal(err)
	}
	tx.SetPartition(dataset.TableTorrents, key, []dataset.FileInfo{fi})
	if _, err := tx.Commit(ctx, dataset.CommitOptions{Writer: "test"}); err != nil {
		t.Fatal(err)
	}
}

// TestReadmeQueries runs README's DuckDB queries on a dataset with new
// hashes (due), failed ones (due within the hour), live leases and a
// torrent: each runs, a hash prints as lowercase hex (DuckDB's hex() is
// uppercase), and "retries due within a day" counts what status's waves
// overdue, within_1h and within_1d count (it counted the leased hashes
// too), first with no DIR/blocklist, then with one listing 3 due hashes
// (it counted them too: status leaves them out).
func TestReadmeQueries(t *testing.T) {
	needCommands(t, "dedup", "plan-retries", "merge", "status")
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	var list strings.Builder
	for i := range 12 {
		fmt.Fprintf(&list, "%02x%038x\n", (i*19+0xa0)%256, i+1) // hex letters in most first bytes
	}
	listPath := filepath.Join(dir, "hashes.txt")
	if err := os.WriteFile(listPath, []byte(list.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	mustInfohash(t, "dedup", "--data", data, listPath)
	plan := func(name string, limit int) []schema.Job {
		p := filepath.Join(dir, name)
		mustInfohash(t, "plan-retries", "--data", data, "--limit", strconv.Itoa(limit), "-o", p)
		jobs, err := dataset.ReadFile[schema.Job](p)
		if err != nil || len(jobs) != limit {
			t.Fatalf("%s: %d jobs, %v; want %d", name, len(jobs), err, limit)
		}
		return jobs
	}
	results := filepath.Join(dir, "results.parquet")
	writeResults(t, results, plan("jobs1.parquet", 4), schema.OutcomeNoPeers)
	mustInfohash(t, "merge", "--data", data, results)
	leased := plan("jobs2.parquet", 3) // live leases
	addTorrent(t, data, schema.Hash{0xab, 0xcd, 0xef})

	t.Run("no blocklist", func(t *testing.T) { checkReadmeQueries(t, data, 9) })

	// Three due hashes, each written as a blocklist may write it: in
	// uppercase after blanks with a comment, as a 64-digit v2 hash whose
	// first 20 bytes are the key, and with a CR line end.
	isLeased := map[schema.Hash]bool{}
	for _, j := range leased {
		isLeased[j.InfoHash] = true
	}
	forms := []string{"  %s  # spam\n", "%s" + strings.Repeat("e", 24) + "\n", "%s\r\n"}
	block, n := "# blocked hashes\n\n", 0
	for _, line := range strings.Split(strings.TrimSpace(list.String()), "\n") {
		h, _, _, err := schema.ParseHex(line)
		if err != nil {
			t.Fatal(err)
		}
		if isLeased[h] || n == len(forms) {
			continue
		}
		if n == 0 {
			line = strings.ToUpper(line)
		}
		block += fmt.Sprintf(forms[n], line)
		n++
	}
	if err := os.WriteFile(filepath.Join(data, "blocklist"), []byte(block), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("3 hashes blocklisted", func(t *testing.T) { checkReadmeQueries(t, data, 6) })
}

// checkReadmeQueries runs README's queries on dataset data, whose status
// must count wantDue hashes in its waves overdue, within_1h and within_1d.
func checkReadmeQueries(t *testing.T, data string, wantDue int64) {
	t.Helper()
	var st struct {
		RetryWaves map[string]int64 `json:"retry_waves"`
		Leased     int64            `json:"leased"`
	}
	if err := json.Unmarshal([]byte(mustInfohash(t, "status", "--data", data, "--format", "json")), &st); err != nil {
		t.Fatal(err)
	}
	if due := st.RetryWaves["overdue"] + st.RetryWaves["within_1h"] + st.RetryWaves["within_1d"]; st.Leased != 3 || due != wantDue {
		t.Fatalf("status: %d leased, waves %v (%d due within a day, want %d): the dataset is not what this test needs",
			st.Leased, st.RetryWaves, due, wantDue)
	}

	db := duck(t)
	queries := readmeQueries(t, data)
	for _, q := range queries {
		cols, rows, err := Rows(db, q)
		if err != nil {
			t.Errorf("README query fails: %v\n%s", err, q)
			continue
		}
		for i, c := range cols {
			for _, r := range rows {
				if c == "info_hash" && r[i] != "abcdef"+strings.Repeat("0", 34) {
					t.Errorf("README query prints info_hash %s, want abcdef00…, lowercase hex:\n%s", r[i], q)
				}
			}
		}
		if !strings.Contains(q, "next_retry") {
			continue
		}
		var due int64
		for _, r := range rows {
			n, err := strconv.ParseInt(r[len(r)-1], 10, 64)
			if err != nil {
				t.Fatalf("count %q: %v", r[len(r)-1], err)
			}
			due += n
		}
		if due != wantDue {
			t.Errorf("README's due-within-a-day query counts %d hashes (%v), status's waves %d\n%s", due, rows, wantDue, q)
		}
	}
	if len(queries) != 3 {
		t.Errorf("%d README queries, want 3", len(queries))
	}
}
