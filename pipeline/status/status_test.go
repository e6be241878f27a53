package status

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/leases"
	"github.com/infohash/infohash/formats/schema"
)

func TestReport(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	ms := func(d time.Duration) int64 { return now.Add(d).UnixMilli() }
	d, err := dataset.Open(context.Background(), t.TempDir(), dataset.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	// Leases live in the leases table; the state's lease columns stay
	// null, as plan-retries leaves them.
	rows := []schema.State{
		{InfoHash: schema.Hash{0, 1}, HashType: 1, MetadataStatus: "new", Tier: "hot", NextRetry: ms(-time.Minute)}, // leased
		{InfoHash: schema.Hash{0, 2}, HashType: 1, MetadataStatus: "failed", Tier: "hot", LastFailure: "no_peers", NextRetry: ms(30 * time.Minute)},
		{InfoHash: schema.Hash{0, 3}, HashType: 1, MetadataStatus: "failed", Tier: "hot", LastFailure: "no_peers", NextRetry: ms(5 * time.Hour)}, // lease ended
		{InfoHash: schema.Hash{0, 4}, HashType: 1, MetadataStatus: "failed", Tier: "cold", LastFailure: "timeout", NextRetry: ms(90 * 24 * time.Hour)},
		{InfoHash: schema.Hash{0, 5}, HashType: 1, MetadataStatus: "fetched", Tier: "hot"},
		{InfoHash: schema.Hash{0, 6}, HashType: 1, MetadataStatus: "new", Tier: "hot", NextRetry: ms(-time.Hour)},
	}
	other := []schema.State{ // a partition with no live lease
		{InfoHash: schema.Hash{9, 1}, HashType: 1, MetadataStatus: "new", Tier: "hot", NextRetry: ms(-time.Hour)},
	}
	tx, _ := d.Begin()
	for key, rows := range map[string][]schema.State{"00": rows, "09": other} {
		fi, err := dataset.WriteStaged(tx, dataset.TableState, key, rows)
		if err != nil {
			t.Fatal(err)
		}
		tx.SetPartition(dataset.TableState, key, []dataset.FileInfo{fi})
	}
	if err := leases.Write(tx, leases.Set{
		{0, 1}: {InfoHash: schema.Hash{0, 1}, LeaseID: "L1", LeaseUntil: ms(time.Hour), PlannedAt: ms(-time.Hour)},
		{0, 3}: {InfoHash: schema.Hash{0, 3}, LeaseID: "L0", LeaseUntil: ms(-time.Minute), PlannedAt: ms(-3 * time.Hour)},
	}); err != nil {
		t.Fatal(err)
	}
	tx.AddApplied(dataset.Applied{ID: "a1", Name: "first.parquet", Rows: 3, At: now.Add(-time.Hour)})
	tx.AddApplied(dataset.Applied{ID: "a2", Name: "second.parquet", Rows: 2, At: now.Add(-time.Minute)})
	if _, err := tx.Commit(context.Background(), dataset.CommitOptions{Writer: "test"}); err != nil {
		t.Fatal(err)
	}
	inbox := filepath.Join(d.Dir, "inbox")
	os.MkdirAll(inbox, 0o755)
	os.WriteFile(filepath.Join(inbox, dataset.PartialPrefix+"1.arrow"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(inbox, "stdin-2.txt.bad"), []byte("x"), 0o644)
	r, err := Run(context.Background(), d.Dir, now, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want int64
	}{
		{"hashes", r.Hashes, 7},
		{"failed", r.ByStatus["failed"], 3},
		{"cold", r.ByTier["cold"], 1},
		{"failed cold", r.ByStatusTier["failed"]["cold"], 1},
		{"new hot", r.ByStatusTier["new"]["hot"], 3},
		{"no_peers", r.ByFailure["no_peers"], 2},
		{"leased", deref(r.Leased), 1},
		{"leases expired", deref(r.LeasesExpired), 1},
		{"oldest expired lease", func() int64 {
			if r.OldestExpired == nil {
				return 0
			}
			return r.OldestExpired.UnixMilli()
		}(), ms(-time.Minute)},
		{"partial inputs", int64(len(r.Partial)), 1},
		{"rejected inputs", int64(len(r.Rejected)), 1},
		{"overdue", r.RetryWaves["overdue"], 2},
		{"within_1h", r.RetryWaves["within_1h"], 1},
		{"within_1d", r.RetryWaves["within_1d"], 1},
		{"later", r.RetryWaves["later"], 1},
		{"state rows", r.TableRows["state"], 7},
		{"inputs applied", r.InputsLedger, 2},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	if a := r.LastInput; a == nil || a.Name != "second.parquet" || a.Rows != 2 || !a.At.Equal(now.Add(-time.Minute)) {
		t.Errorf("last input %+v", a)
	}
	cur, err := d.Current()
	if err != nil {
		t.Fatal(err)
	}
	if r.DatasetID == nil || *r.DatasetID != cur.DatasetID || !dataset.ValidDatasetID(cur.DatasetID) {
		t.Errorf("dataset_id %v, want the manifest's %q", r.DatasetID, cur.DatasetID)
	}
	if r.Copied || r.AncestorIDs == nil || len(r.AncestorIDs) != 0 {
		t.Errorf("copied %v, ancestor_ids %#v; want false, []", r.Copied, r.AncestorIDs)
	}
	var out bytes.Buffer
	r.Print(&out)
	if !regexp.MustCompile(`(?m)^dataset +.* \(snapshot 1 by test at .*; id ` + cur.DatasetID + `\)$`).MatchString(out.String()) {
		t.Errorf("the dataset line does not name its id %s:\n%s", cur.DatasetID, out.String())
	}
	if !strings.Contains(out.String(), "no_peers 2, timeout 1") || !strings.Contains(out.String(), "read_parquet(") ||
		!regexp.MustCompile(`(?m)^last input +second\.parquet \(2 rows\) applied at 2026-05-31T23:59:00Z$`).MatchString(out.String()) ||
		!strings.Contains(out.String(), "table ledger") ||
		!regexp.MustCompile(`(?m)^expired leases +1 with no result merged .*the oldest ended 2026-05-31T23:59:00Z\): `+
			`plan-retries plans their hashes again as they fall due; until then a late result still counts$`).MatchString(out.String()) ||
		strings.Index(out.String(), "table ledger") > strings.Index(out.String(), "table state") {
		t.Fatalf("print:\n%s", out.String())
	}
}
