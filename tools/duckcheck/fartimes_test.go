package duckcheck

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// TestDescribeReadersFarTimes: times outside the years 0000-9999, which
// RFC 3339 lacks, still read back through --describe's read_csv and
// read_ndjson calls. A lease planned at 9999-12-31T23:00Z (the latest
// --now taken) for 2h ends past 10000-01-01, which csv and jsonl write
// with a fifth year digit (plan-retries refuses to plan one now, but a
// dataset planned before, or written by something else, may hold it); a
// fetched_at past DuckDB's range (a state written by something else:
// merge reads no result that far on) is infinity. Before, that one was
// 292278994-08-17T07:12:55.807Z, and DuckDB failed the whole file on it.
func TestDescribeReadersFarTimes(t *testing.T) {
	needCommands(t, "dedup", "plan-retries", "export")
	dir := t.TempDir()
	data, list := filepath.Join(dir, "data"), filepath.Join(dir, "hashes.txt")
	h := schema.Hash{0x2b, 19: 0x02}
	if err := os.WriteFile(list, []byte(schema.Hex(h)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Date(9999, 12, 31, 23, 0, 0, 0, time.UTC)
	nowArg := now.Format(time.RFC3339)
	mustInfohash(t, "dedup", "--data", data, "--now", nowArg, "--far-now", list)
	commitLease(t, data, schema.Lease{InfoHash: h, LeaseID: "far-lease", LeaseUntil: now.Add(2 * time.Hour).UnixMilli(),
		Attempt: 1, Reason: "new", PlannedAt: now.UnixMilli()})
	commitFetchedAt(t, data, h, math.MaxInt64)

	db := duck(t)
	leases := filepath.Join(dir, "leases.parquet")
	mustInfohash(t, "export", "--data", data, "--table", "leases", "-o", leases)
	until := scalar[int64](t, db, "SELECT epoch_ms(lease_until) FROM read_parquet("+Quote(leases)+")")
	if y10000 := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli(); until < y10000 {
		t.Fatalf("lease_until %d ms, before the year 10000: the dataset proves nothing", until)
	}
	tests := []struct {
		table, col string
		want       string // epoch_ms of the value, or infinity
	}{
		{"leases", "planned_at", fmt.Sprint(now.UnixMilli())},
		{"leases", "lease_until", fmt.Sprint(until)},
		{"torrents", "fetched_at", "infinity"},
	}
	for _, tt := range tests {
		for _, format := range []string{"csv", "jsonl"} {
			t.Run(tt.table+"."+tt.col+"."+format, func(t *testing.T) {
				file := filepath.Join(dir, tt.table+"."+format)
				if _, err := os.Stat(file); err != nil {
					mustInfohash(t, "export", "--data", data, "--table", tt.table, "-o", file)
				}
				csvCall, jsonCall := describeReaders(t, tt.table, file)
				call := map[string]string{"csv": csvCall, "jsonl": jsonCall}[format]
				q := fmt.Sprintf("SELECT CASE WHEN isinf(%[1]s) THEN %[1]s::VARCHAR ELSE epoch_ms(%[1]s)::VARCHAR END FROM %[2]s",
					tt.col, call)
				if got := scalar[string](t, db, q); got != tt.want {
					t.Errorf("%s of %s: %s, want %s", tt.col, file, got, tt.want)
				}
			})
		}
	}
}

// commitLease commits the lease table holding l alone.
func commitLease(t *testing.T, data string, l schema.Lease) {
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
	fi, err := dataset.WriteStaged(tx, dataset.TableLeases, "", []schema.Lease{l})
	if err != nil {
		t.Fatal(err)
	}
	tx.SetPartition(dataset.TableLeases, "", []dataset.FileInfo{fi})
	if _, err := tx.Commit(ctx, dataset.CommitOptions{Writer: "test"}); err != nil {
		t.Fatal(err)
	}
}

// commitFetchedAt commits a torrents row for h fetched at ms.
func commitFetchedAt(t *testing.T, data string, h schema.Hash, ms int64) {
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
	name := "far"
	row := schema.Torrent{InfoHash: h, HashType: schema.HashV1, FetchedAt: ms, MetadataSize: 40,
		Meta: schema.Meta{Name: &name, NameRaw: []byte(name), NameUTF8Valid: true, TotalSize: new(int64(5)),
			FileCount: new(int32(1)), Files: []schema.File{{Path: name, PathRaw: []byte(name), Length: 5}}}}
	key := fmt.Sprintf("%02x", h[0])
	fi, err := dataset.WriteStaged(tx, dataset.TableTorrents, key, []schema.Torrent{row})
	if err != nil {
		t.Fatal(err)
	}
	tx.SetPartition(dataset.TableTorrents, key, []dataset.FileInfo{fi})
	if _, err := tx.Commit(ctx, dataset.CommitOptions{Writer: "test"}); err != nil {
		t.Fatal(err)
	}
}
