package dedup

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/schema"
)

// nullColumnObs writes three observations of two hashes as a Parquet file
// in dir: info_hash and observed_at, and, when null is set, a column of
// that name of Parquet's NULL logical type (all null, stored as an INT32
// with no values: pyarrow's null type).
func nullColumnObs(t *testing.T, dir, null string) string {
	t.Helper()
	type row struct {
		InfoHash   schema.Hash `parquet:"info_hash"`
		ObservedAt int64       `parquet:"observed_at"`
	}
	g := parquet.Group{
		"info_hash":   parquet.Leaf(parquet.FixedLenByteArrayType(20)),
		"observed_at": parquet.Timestamp(parquet.Millisecond),
	}
	if null != "" {
		g[null] = parquet.Optional(parquet.Leaf(parquet.NullType))
	}
	path := filepath.Join(dir, "in.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := parquet.NewWriter(f, parquet.NewSchema("obs", g))
	for _, r := range []row{{schema.Hash{1}, t0.UnixMilli()}, {schema.Hash{2}, t0.UnixMilli() + 1}, {schema.Hash{1}, t0.UnixMilli() + 2}} {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestNullTypedOptionalColumns: an optional column of observations
// (hash_type, source, info_hash_v2) of Parquet's NULL logical type, as
// pyarrow writes an all-null column, is read as its nulls, by both
// readers: the state is the one the input without the column gives. It
// was wrong schema ("column "hash_type" is Type(?), want an integer").
func TestNullTypedOptionalColumns(t *testing.T) {
	want := map[bool]map[schema.Hash]schema.State{}
	for _, col := range []string{"hash_type", "source", "info_hash_v2"} {
		eachParquetReader(t, col, func(t *testing.T) {
			fast := fastPath
			if want[fast] == nil { // the same rows without the column
				data := filepath.Join(t.TempDir(), "ds")
				if _, err := run(t, data, nil, nullColumnObs(t, t.TempDir(), "")); err != nil {
					t.Fatal(err)
				}
				want[fast] = readState(t, data)
			}
			data := filepath.Join(t.TempDir(), "ds")
			if _, err := run(t, data, nil, nullColumnObs(t, t.TempDir(), col)); err != nil {
				t.Fatal(err)
			}
			got := readState(t, data)
			if len(got) != 2 || !maps.EqualFunc(got, want[fast], func(a, b schema.State) bool { return reflect.DeepEqual(a, b) }) {
				t.Fatalf("state\n%+v\nwant (as without the column)\n%+v", got, want[fast])
			}
		})
	}
}
