package dedup

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// Parquet hash_type columns of unsigned integers, as DuckDB writes
// UTINYINT to UBIGINT (parquet-go's uint8 to uint64): INT(n,false).
type (
	u8Type struct {
		InfoHash   schema.Hash `parquet:"info_hash"`
		ObservedAt int64       `parquet:"observed_at,timestamp(millisecond)"`
		HashType   uint8       `parquet:"hash_type"`
	}
	u16Type struct {
		InfoHash   schema.Hash `parquet:"info_hash"`
		ObservedAt int64       `parquet:"observed_at,timestamp(millisecond)"`
		HashType   uint16      `parquet:"hash_type"`
	}
	u32Type struct {
		InfoHash   schema.Hash `parquet:"info_hash"`
		ObservedAt int64       `parquet:"observed_at,timestamp(millisecond)"`
		HashType   uint32      `parquet:"hash_type"`
	}
	u32DictType struct { // a dictionary page: the fast path's other loop
		InfoHash   schema.Hash `parquet:"info_hash"`
		ObservedAt int64       `parquet:"observed_at,timestamp(millisecond)"`
		HashType   uint32      `parquet:"hash_type,dict"`
	}
	u64Type struct { // INT64: the row reader's, whichever path is asked for
		InfoHash   schema.Hash `parquet:"info_hash"`
		ObservedAt int64       `parquet:"observed_at,timestamp(millisecond)"`
		HashType   uint64      `parquet:"hash_type"`
	}
)

// Parquet observed_at columns of unsigned 64-bit integers (UBIGINT, as
// DuckDB writes it; parquet-go's uint64): epoch ms, read by the row
// reader whichever path is asked for.
type (
	u64At struct {
		InfoHash   schema.Hash `parquet:"info_hash"`
		ObservedAt uint64      `parquet:"observed_at"`
	}
	u64AtDict struct {
		InfoHash   schema.Hash `parquet:"info_hash"`
		ObservedAt uint64      `parquet:"observed_at,dict"`
	}
	u64AtOptional struct { // DuckDB's and Arrow's default
		InfoHash   schema.Hash `parquet:"info_hash"`
		ObservedAt uint64      `parquet:"observed_at,optional"`
	}
)

// convertedOnly is a footer edit that drops column name's logical type,
// keeping its converted type, which must be ct (a writer older than
// logical types marks an unsigned column UINT_n only).
func convertedOnly(t *testing.T, name string, ct deprecated.ConvertedType) func(*format.FileMetaData) {
	return func(md *format.FileMetaData) {
		for i := range md.Schema {
			if e := &md.Schema[i]; e.Name == name {
				if got := e.ConvertedType; !got.Valid || got.V != ct || e.LogicalType.Value == nil {
					t.Fatalf("%s's converted type %v, logical type %v: want %v and one", name, got, &e.LogicalType, ct)
				}
				e.LogicalType = format.LogicalType{}
			}
		}
	}
}

// TestParquetUnsignedHashType: an unsigned Parquet hash_type is read by
// value by both readers, as the Arrow path reads a uint64 one: its
// maximum is "out of range", as one beyond int8 is, never the negative
// number its bits make as a signed integer (a UINTEGER's or UBIGINT's
// maximum was "hash_type -1, want 1 or 2"); 2 is v2, 3 is named as it is.
// A writer older than logical types marks the column UINT_32 only.
func TestParquetUnsignedHashType(t *testing.T) {
	h := schema.Hash{0x21, 7}
	at := t0.UnixMilli()
	const outOfRange = "row 2: hash_type out of range, want 1 or 2"
	plainConverted := convertedOnly(t, "hash_type", deprecated.Uint32)
	dir := t.TempDir()
	tests := []parquetCase{ // the hashes of those read are v2
		{"UTINYINT max", writeRowsBytes(t, dir, []u8Type{{h, at, 1}, {h, at, math.MaxUint8}}), outOfRange},
		{"USMALLINT max", writeRowsBytes(t, dir, []u16Type{{h, at, 1}, {h, at, math.MaxUint16}}), outOfRange},
		{"UINTEGER max", writeRowsBytes(t, dir, []u32Type{{h, at, 1}, {h, at, math.MaxUint32}}), outOfRange},
		{"UINTEGER max-1", writeRowsBytes(t, dir, []u32Type{{h, at, 1}, {h, at, math.MaxUint32 - 1}}), outOfRange},
		{"UINTEGER 2^31", writeRowsBytes(t, dir, []u32Type{{h, at, 1}, {h, at, 1 << 31}}), outOfRange},
		{"UINTEGER 3", writeRowsBytes(t, dir, []u32Type{{h, at, 1}, {h, at, 3}}), "row 2: hash_type 3, want 1 or 2"},
		{"UINTEGER 2", writeRowsBytes(t, dir, []u32Type{{h, at, 1}, {h, at, 2}}), ""},
		{"UINTEGER dictionary max", writeRowsBytes(t, dir, []u32DictType{{h, at, 1}, {h, at, math.MaxUint32}}), outOfRange},
		{"UINTEGER dictionary 2", writeRowsBytes(t, dir, []u32DictType{{h, at, 1}, {h, at, 2}}), ""},
		{"UINT_32 max", editFooter(t, writeRowsBytes(t, dir, []u32Type{{h, at, 1}, {h, at, math.MaxUint32}}), plainConverted),
			outOfRange},
		{"UBIGINT max", writeRowsBytes(t, dir, []u64Type{{h, at, 1}, {h, at, math.MaxUint64}}), outOfRange},
		{"UBIGINT 2^63", writeRowsBytes(t, dir, []u64Type{{h, at, 1}, {h, at, 1 << 63}}), outOfRange},
		{"UBIGINT 2", writeRowsBytes(t, dir, []u64Type{{h, at, 1}, {h, at, 2}}), ""},
	}
	checkParquetCases(t, dir, tests, func(t *testing.T, st map[schema.Hash]schema.State) {
		if got := st[h].HashType; got != schema.HashV2 {
			t.Fatalf("hash_type %d, want 2", got)
		}
	})
}

// TestParquetUnsignedObservedAt: an unsigned Parquet observed_at
// (UBIGINT) past 2^63 is refused by value, in the words the Arrow path
// uses for a uint64 one (TestArrowColumnTypes): the message showed the
// negative int64 its bits make ("observed_at -1 ms (1969-12-31T23:59:59.999Z)
// is outside ..."). One in 2001..2200 is read as epoch ms.
func TestParquetUnsignedObservedAt(t *testing.T) {
	h := schema.Hash{0x21, 7}
	at := uint64(t0.UnixMilli())
	const (
		pastMax = "row 2: observed_at 18446744073709551615 ms is outside 2001-01-01..2200-01-01"
		past63  = "row 2: observed_at 9223372036854775808 ms is outside 2001-01-01..2200-01-01"
	)
	dir := t.TempDir()
	tests := []parquetCase{ // the hash of those read was first seen at t0
		{"UBIGINT max", writeRowsBytes(t, dir, []u64At{{h, at}, {h, math.MaxUint64}}), pastMax},
		{"UBIGINT 2^63", writeRowsBytes(t, dir, []u64At{{h, at}, {h, 1 << 63}}), past63},
		{"UBIGINT 2^63-1", writeRowsBytes(t, dir, []u64At{{h, at}, {h, math.MaxInt64}}),
			"row 2: observed_at 9223372036854775807 ms (year 292278994) is outside 2001-01-01..2200-01-01"},
		{"UBIGINT dictionary max", writeRowsBytes(t, dir, []u64AtDict{{h, at}, {h, math.MaxUint64}}), pastMax},
		{"UBIGINT optional max", writeRowsBytes(t, dir, []u64AtOptional{{h, at}, {h, math.MaxUint64}}), pastMax},
		{"UINT_64 max", editFooter(t, writeRowsBytes(t, dir, []u64At{{h, at}, {h, math.MaxUint64}}),
			convertedOnly(t, "observed_at", deprecated.Uint64)), pastMax},
		{"UBIGINT in range", writeRowsBytes(t, dir, []u64At{{h, at}, {h, at + 1}}), ""},
	}
	checkParquetCases(t, dir, tests, func(t *testing.T, st map[schema.Hash]schema.State) {
		if got := st[h].FirstSeen; got != int64(at) {
			t.Fatalf("first_seen %d, want %d", got, at)
		}
	})
}

// parquetCase is a Parquet input of a test, and what reading it must
// fail with ("" for nothing).
type parquetCase struct {
	name string
	file []byte
	want string
}

// checkParquetCases writes each case's file into dir and reads it with
// both readers (eachParquetReader): one that must fail does, saying its
// want and in.parquet, as bad input (exit 2); any other is deduped into
// a new dataset, whose state read checks.
func checkParquetCases(t *testing.T, dir string, tests []parquetCase, read func(t *testing.T, st map[schema.Hash]schema.State)) {
	t.Helper()
	for _, tt := range tests {
		p := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".parquet")
		if err := os.WriteFile(p, tt.file, 0o644); err != nil {
			t.Fatal(err)
		}
		eachParquetReader(t, tt.name, func(t *testing.T) {
			if tt.want == "" {
				data := filepath.Join(t.TempDir(), "ds")
				if _, err := run(t, data, nil, p); err != nil {
					t.Fatalf("err = %v, want none", err)
				}
				read(t, readState(t, data))
				return
			}
			err := readAs(t, p, "in.parquet")
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "in.parquet") ||
				exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("err = %v (exit %d), want %q in in.parquet, exit 2", err, exitcode.Of(err), tt.want)
			}
		})
	}
}

// TestArrowHashTypePast63BothReaders: an Arrow uint64 hash_type past
// 2^63, in a second record batch, is refused by the column reader and the
// row reader with the same one line, exit 2, naming the row as counted in
// the stream: the row reader said `column "hash_type" row 1: ... is more
// than an int64 holds`, its row counted in the batch.
func TestArrowHashTypePast63BothReaders(t *testing.T) {
	defer func() { fastPath = true }()
	for _, tt := range []struct {
		name string
		v    uint64
	}{
		{"2^63", 1 << 63},
		{"2^64-1", math.MaxUint64},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sch := arrow.NewSchema([]arrow.Field{
				{Name: "info_hash", Type: arrow.BinaryTypes.Binary},
				{Name: "observed_at", Type: &arrow.TimestampType{Unit: arrow.Millisecond}},
				{Name: "hash_type", Type: arrow.PrimitiveTypes.Uint64},
			}, nil)
			var buf bytes.Buffer
			w := ipc.NewWriter(&buf, ipc.WithSchema(sch))
			for _, types := range [][]uint64{{1, 2}, {1, tt.v}} { // rows 0-1, then 2-3
				b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
				for i, typ := range types {
					b.Field(0).(*array.BinaryBuilder).Append(append(make([]byte, 19), byte(i+1)))
					b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(t0.UnixMilli()))
					b.Field(2).(*array.Uint64Builder).Append(typ)
				}
				rec := b.NewRecord()
				if err := w.Write(rec); err != nil {
					t.Fatal(err)
				}
				rec.Release()
				b.Release()
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(t.TempDir(), "in.arrow")
			if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			const want = "row 4: hash_type out of range, want 1 or 2"
			errs := map[bool]string{}
			for _, fast := range []bool{true, false} {
				fastPath = fast
				in, err := probe(p, "in.arrow", "")
				if err != nil {
					t.Fatal(err)
				}
				bt := newBatch(3600_000)
				_, err = readInput(context.Background(), in, t0.UnixMilli(), bt)
				bt.release()
				if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") ||
					exitcode.Of(err) != exitcode.Usage {
					t.Fatalf("fast path %v: err = %v (exit %d), want one line with %q, exit 2", fast, err, exitcode.Of(err), want)
				}
				errs[fast] = err.Error()
			}
			if errs[true] != errs[false] {
				t.Fatalf("the readers differ:\ncolumns: %s\nrows:    %s", errs[true], errs[false])
			}
		})
	}
}
