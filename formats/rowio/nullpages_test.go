package rowio

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/rowio/rowiotest"
)

// TestNullColumnWithValues: a column of Parquet's NULL logical type (all
// null) whose pages hold a value that is not null, as a footer edit over
// an INT64 or INT32 column leaves it, is a corrupt Parquet input naming
// the column, in one line, whatever its pages' version and wherever the
// value is: parquet-go read each such value as 0. A NULL column whose
// pages hold only nulls reads as nulls, as pyarrow's all-null columns do.
func TestNullColumnWithValues(t *testing.T) {
	type row struct {
		ID int32  `parquet:"id"`
		N  *int64 `parquet:"n,optional"`
	}
	type read struct { // what the reader wants: both may be null
		ID *int32 `parquet:"id,optional"`
		N  *int64 `parquet:"n,optional"`
	}
	rows := func(n int, value func(i int) *int64) []row {
		out := make([]row, n)
		for i := range out {
			out[i] = row{ID: int32(i), N: value(i)}
		}
		return out
	}
	none := func(int) *int64 { return nil }
	for _, tt := range []struct {
		name   string
		rows   []row
		column string // the column typed NULL
		opts   []parquet.WriterOption
		want   string // how many values the error says are not null; "": read, every value of column null
	}{
		{"a value, v1 pages", rows(3, func(i int) *int64 { return map[int]*int64{1: new(int64(5))}[i] }), "n",
			[]parquet.WriterOption{parquet.DataPageVersion(1)}, "holds 1 value that is not null"},
		{"values, v2 pages", rows(3, func(i int) *int64 { return new(int64(i)) }), "n",
			[]parquet.WriterOption{parquet.DataPageVersion(2)}, "holds 3 values that are not null"},
		{"a value on a later page, dictionary-encoded", rows(4000, func(i int) *int64 {
			return map[bool]*int64{true: new(int64(7))}[i == 3999]
		}), "n", []parquet.WriterOption{parquet.PageBufferSize(256)}, "holds 1 value that is not null"},
		{"a REQUIRED column", rows(2, none), "id", nil, "page at offset 4 holds 2 values that are not null"},
		{"all null, v1 pages", rows(3, none), "n", []parquet.WriterOption{parquet.DataPageVersion(1)}, ""},
		{"all null, v2 pages", rows(3, none), "n", []parquet.WriterOption{parquet.DataPageVersion(2)}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "in.parquet")
			b := rowiotest.EditFooter(t, rowiotest.Write(t, tt.rows, tt.opts...), rowiotest.NullType(t, tt.column))
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := Open[read](path, nil)
			if tt.want != "" {
				if err == nil {
					r.Close()
				}
				head := path + `: corrupt Parquet: row group 0 column "` + tt.column + `": page at offset `
				tail := " in a column of the NULL type (all null)"
				if err == nil || !strings.HasPrefix(err.Error(), head) || !strings.HasSuffix(err.Error(), tt.want+tail) ||
					strings.Contains(err.Error(), "\n") {
					t.Fatalf("got %v\nwant one line %q...%q", err, head, tt.want+tail)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			got := make([]read, len(tt.rows)+1)
			n, _ := r.Read(got)
			if n != len(tt.rows) {
				t.Fatalf("read %d rows, want %d", n, len(tt.rows))
			}
			for i, g := range got[:n] {
				if g.N != nil || g.ID == nil || *g.ID != int32(i) {
					t.Fatalf("row %d: id %v, n %v; want id %d, n null", i, g.ID, g.N, i)
				}
			}
		})
	}
}
