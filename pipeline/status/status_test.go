package status

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

func TestReport(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	ms := func(d time.Duration) int64 { return now.Add(d).UnixMilli() }
	d, err := dataset.Open(context.Background(), t.TempDir(), dataset.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	rows := []schema.State{
		{InfoHash: schema.Hash{0, 1}, MetadataStatus: "new", Tier: "hot", NextRetry: ms(-time.Minute)},
		{InfoHash: schema.Hash{0, 2}, MetadataStatus: "failed", Tier: "hot", LastFailure: "no_peers", NextRetry: ms(30 * time.Minute)},
		{InfoHash: schema.Hash{0, 3}, MetadataStatus: "failed", Tier: "hot", LastFailure: "no_peers", NextRetry: ms(5 * time.Hour), LeaseUntil: ms(time.Minute)},
		{InfoHash: schema.Hash{0, 4}, MetadataStatus: "failed", Tier: "cold", LastFailure: "timeout", NextRetry: ms(90 * 24 * time.Hour)},
		{InfoHash: schema.Hash{0, 5}, MetadataStatus: "fetched", Tier: "hot"},
	}
	tx, _ := d.Begin()
	fi, err := dataset.WriteStaged(tx, dataset.TableState, "00", rows)
	if err != nil {
		t.Fatal(err)
	}
	tx.SetPartition(dataset.TableState, "00", []dataset.FileInfo{fi})
	tx.AddApplied(dataset.Applied{ID: "a1", Name: "first.parquet", Rows: 3, At: now.Add(-time.Hour)})
	tx.AddApplied(dataset.Applied{ID: "a2", Name: "second.parquet", Rows: 2, At: now.Add(-time.Minute)})
	if _, err := tx.Commit(context.Background(), dataset.CommitOptions{Writer: "test"}); err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), d.Dir, now, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want int64
	}{
		{"hashes", r.Hashes, 5},
		{"failed", r.ByStatus["failed"], 3},
		{"cold", r.ByTier["cold"], 1},
		{"no_peers", r.ByFailure["no_peers"], 2},
		{"leased", r.Leased, 1},
		{"overdue", r.RetryWaves["overdue"], 1},
		{"next hour", r.RetryWaves["next hour"], 1},
		{"next day", r.RetryWaves["next day"], 1},
		{"later", r.RetryWaves["later"], 1},
		{"state rows", r.TableRows["state"], 5},
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
	var out bytes.Buffer
	r.Print(&out)
	if !strings.Contains(out.String(), "no_peers 2, timeout 1") || !strings.Contains(out.String(), "read_parquet(") ||
		!strings.Contains(out.String(), "last input    second.parquet (2 rows) applied at 2026-05-31T23:59:00Z") ||
		!strings.Contains(out.String(), "table ledger") ||
		strings.Index(out.String(), "table ledger") > strings.Index(out.String(), "table state") {
		t.Fatalf("print:\n%s", out.String())
	}
}
