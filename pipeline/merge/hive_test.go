package merge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// hiveRow is a no_peers result without lease_id (as DuckDB's COPY ...
// PARTITION_BY (lease_id) writes one into lease_id=.../data_0.parquet);
// hiveLeaseRow one with it; hiveNoOutcome one without outcome.
type hiveRow struct {
	InfoHash    schema.Hash `parquet:"info_hash"`
	HashType    int8        `parquet:"hash_type,int(8)"`
	Attempt     int32       `parquet:"attempt"`
	AttemptedAt int64       `parquet:"attempted_at,timestamp(millisecond)"`
	Outcome     string      `parquet:"outcome"`
	PeersFound  int32       `parquet:"peers_found"`
	PeersTried  int32       `parquet:"peers_tried"`
}

type hiveLeaseRow struct {
	hiveRow
	LeaseID string `parquet:"lease_id,optional"`
}

type hiveNoOutcome struct {
	InfoHash    schema.Hash `parquet:"info_hash"`
	HashType    int8        `parquet:"hash_type,int(8)"`
	Attempt     int32       `parquet:"attempt"`
	AttemptedAt int64       `parquet:"attempted_at,timestamp(millisecond)"`
	PeersFound  int32       `parquet:"peers_found"`
	PeersTried  int32       `parquet:"peers_tried"`
}

// hiveParquet writes rows as dir/data_0.parquet.
func hiveParquet[T any](rows ...T) func(t *testing.T, dir string) string {
	return func(t *testing.T, dir string) string {
		t.Helper()
		p := filepath.Join(dir, "data_0.parquet")
		w, err := rowio.Create[T](p, nil)
		if err == nil {
			err = w.Write(rows)
		}
		if err == nil {
			err = w.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
}

// TestHivePartitionedResults: a results file whose folder is named, Hive
// style, after a column merge reads that the file lacks (lease_id=L/, as
// DuckDB's PARTITION_BY writes it; OUTCOME= in any case) is bad input in
// one line naming the file, the column and the folder, Parquet or Arrow,
// as dedup refuses its own (inputdir.HiveError). merge read it without
// the column: every lease_id null (a leased job's result taken as a
// manual fetch's), or refused an outcome=no_peers/ one as "not a results
// file". A file that holds its partition column, or a folder named after
// no column merge reads, is read as before. A file named from inside its
// folder (cd lease_id=L1 && merge data_0.parquet) is refused as one named
// from above: it was read, every lease_id null.
func TestHivePartitionedResults(t *testing.T) {
	h := hashAt(0x48, 1)
	row := hiveRow{InfoHash: h, HashType: schema.HashV1, Attempt: 1, AttemptedAt: t0, Outcome: schema.OutcomeNoPeers}
	for _, tt := range []struct {
		name, dir string
		write     func(t *testing.T, dir string) string
		inside    bool   // named from inside dir, by its bare name
		want      string // "": read
	}{
		{name: "parquet under lease_id=", dir: "lease_id=L1", write: hiveParquet(row),
			want: `column "lease_id" is not in the file but in the name of its folder "lease_id=L1" (Hive partitioning), which merge does not read`},
		{name: "parquet under lease_id=, named from inside it", dir: "lease_id=L1", write: hiveParquet(row), inside: true,
			want: `column "lease_id" is not in the file but in the name of its folder "lease_id=L1" (Hive partitioning)`},
		{name: "parquet under outcome=", dir: "day=1/outcome=no_peers",
			write: hiveParquet(hiveNoOutcome{InfoHash: h, HashType: schema.HashV1, Attempt: 1, AttemptedAt: t0}),
			want:  `column "outcome" is not in the file but in the name of its folder "outcome=no_peers"`},
		{name: "arrow under LEASE_ID= (any case)", dir: "LEASE_ID=L1", write: func(t *testing.T, dir string) string {
			t.Helper()
			var s strings.Builder
			w := rowio.NewArrowWriter[hiveRow]("test", &s)
			if err := w.Write([]hiveRow{row}); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, "results.arrows")
			if err := os.WriteFile(p, []byte(s.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}, want: `column "lease_id" is not in the file but in the name of its folder "LEASE_ID=L1"`},
		{name: "parquet under lease_id= that holds lease_id", dir: "lease_id=L1",
			write: hiveParquet(hiveLeaseRow{row, "L1"})},
		{name: "parquet under day=, no column of merge's", dir: "day=2026-01-01", write: hiveParquet(row)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), tt.dir)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			p := tt.write(t, dir)
			if tt.inside {
				t.Chdir(dir)
				p = filepath.Base(p)
			}
			got, _, err := readResults(input{name: p, path: p}, nil)
			if tt.want == "" {
				if err != nil || len(got) != 1 || got[0].InfoHash != h {
					t.Fatalf("read %d rows, err %v; want the file's one row", len(got), err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), "merge: "+p+": wrong schema: ") || !strings.Contains(err.Error(), tt.want) ||
				exitcode.Of(err) != exitcode.Usage || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v (exit %d, %d rows)\nwant one line of bad input naming %s with %q", err, exitcode.Of(err), len(got), p, tt.want)
			}
		})
	}
}
