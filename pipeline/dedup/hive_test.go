package dedup

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestHivePartitionedInput: a file whose folder names a column dedup
// reads, Hive style (source=dht_get_peers/, as DuckDB's PARTITION_BY
// writes it), that the file lacks is bad input naming the column and the
// folder, Parquet or Arrow. It was read as rows without that column:
// every source an import, every hash v1. A file that has the column
// (DuckDB's WRITE_PARTITION_COLUMNS), or a folder named after no column
// dedup reads, is read as before. A file named from inside its folder
// (cd source=dht_get_peers && dedup data_0.parquet, or dedup . there) is
// refused as one named from above: it was read, every source an import.
func TestHivePartitionedInput(t *testing.T) {
	type noSource struct {
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
	}
	type withSource struct {
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
		Source     string `parquet:"source"`
	}
	h := make([]byte, 20)
	at := t0.UnixMilli()
	for _, tt := range []struct {
		name, dir string
		write     func(t *testing.T, p string) string
		inside    bool   // named from inside dir, by its bare name
		want      string // "": read
	}{
		{name: "parquet under source=, hash_type=", dir: "source=dht_get_peers/hash_type=2",
			write: func(t *testing.T, p string) string { return writeRows(t, p+".parquet", []noSource{{h, at}}) },
			want:  `column "source" is not in the file but in the name of its folder "source=dht_get_peers" (Hive partitioning)`},
		{name: "parquet under source=, named from inside it", dir: "source=dht_get_peers", inside: true,
			write: func(t *testing.T, p string) string { return writeRows(t, p+".parquet", []noSource{{h, at}}) },
			want:  `column "source" is not in the file but in the name of its folder "source=dht_get_peers" (Hive partitioning)`},
		{name: "parquet under hash_type= with source", dir: "hash_type=2",
			write: func(t *testing.T, p string) string { return writeRows(t, p+".parquet", []withSource{{h, at, "x"}}) },
			want:  `column "hash_type" is not in the file but in the name of its folder "hash_type=2"`},
		{name: "arrow under SOURCE= (any case)", dir: "SOURCE=dht_get_peers",
			write: func(t *testing.T, p string) string {
				s := hashTimeStream(t, h, at)
				if err := os.WriteFile(p+".arrows", s, 0o644); err != nil {
					t.Fatal(err)
				}
				return p + ".arrows"
			},
			want: `column "source" is not in the file but in the name of its folder "SOURCE=dht_get_peers"`},
		{name: "parquet under source= that holds source", dir: "source=x",
			write: func(t *testing.T, p string) string { return writeRows(t, p+".parquet", []withSource{{h, at, "x"}}) }},
		{name: "parquet under day=, no column of dedup's", dir: "day=2026-01-01",
			write: func(t *testing.T, p string) string { return writeRows(t, p+".parquet", []noSource{{h, at}}) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), tt.dir)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			p := tt.write(t, filepath.Join(dir, "data_0"))
			if tt.inside {
				t.Chdir(dir)
				p = filepath.Base(p)
			}
			in, err := probe(p, p, "")
			if err != nil {
				t.Fatal(err)
			}
			b := newBatch(3600_000)
			defer b.release()
			_, err = readInput(context.Background(), in, t0.UnixMilli(), b)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), p) {
				t.Fatalf("got %v, want an error naming %s with %q", err, p, tt.want)
			}
		})
	}
}

// hashTimeStream is an Arrow IPC stream of one row: info_hash h,
// observed_at at (ms), and no other column.
func hashTimeStream(t *testing.T, h []byte, at int64) []byte {
	t.Helper()
	sch := arrow.NewSchema([]arrow.Field{{Name: "info_hash", Type: arrow.BinaryTypes.Binary},
		{Name: "observed_at", Type: arrow.FixedWidthTypes.Timestamp_ms}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	b.Field(0).(*array.BinaryBuilder).Append(h)
	b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(at))
	rec := b.NewRecord()
	defer rec.Release()
	var out bytes.Buffer
	w := ipc.NewWriter(&out, ipc.WithSchema(sch))
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
