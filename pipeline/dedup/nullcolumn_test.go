package dedup

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/rowio/rowiotest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
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

// TestNullTypedColumnWithValues: an optional column of observations of
// Parquet's NULL logical type whose pages hold values that are not null
// (a footer edit over a hash_type of 2s, a source, an info_hash_v2) is bad
// input, exit 2, in one line naming the file and the column, by both
// readers, and nothing is committed: hash_type's 2s were read as 0 (v1),
// the sources as imports. An all-null one reads as nulls
// (TestNullTypedOptionalColumns).
func TestNullTypedColumnWithValues(t *testing.T) {
	type row struct {
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
		HashType   *int32 `parquet:"hash_type,optional"`
		Source     string `parquet:"source,optional"`
		InfoHashV2 []byte `parquet:"info_hash_v2,optional"`
	}
	v2 := bytes.Repeat([]byte{3}, 32)
	rows := []row{{v2[:20], t0.UnixMilli(), new(int32(2)), schema.SourceAnnouncePeer, v2},
		{v2[:20], t0.UnixMilli() + 1, new(int32(2)), schema.SourceGetPeers, v2}}
	for _, col := range []string{"hash_type", "source", "info_hash_v2"} {
		eachParquetReader(t, col, func(t *testing.T) {
			in := filepath.Join(t.TempDir(), "in.parquet")
			b := rowiotest.EditFooter(t, rowiotest.Write(t, rows), rowiotest.NullType(t, col))
			if err := os.WriteFile(in, b, 0o644); err != nil {
				t.Fatal(err)
			}
			data := filepath.Join(t.TempDir(), "ds")
			_, err := run(t, data, nil, in)
			head := "dedup: " + in + `: corrupt Parquet: row group 0 column "` + col + `": page at offset `
			tail := "holds 2 values that are not null in a column of the NULL type (all null)"
			if err == nil || !strings.HasPrefix(err.Error(), head) || !strings.HasSuffix(err.Error(), tail) ||
				exitcode.Of(err) != exitcode.Usage || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v (exit %d)\nwant one line %q...%q, exit 2", err, exitcode.Of(err), head, tail)
			}
			if _, serr := os.Stat(filepath.Join(data, "CURRENT")); serr == nil {
				if st := readState(t, data); len(st) != 0 {
					t.Fatalf("the refused input committed %d hashes", len(st))
				}
			}
		})
	}
}
