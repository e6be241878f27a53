package rowio

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/parquet-go/parquet-go"
)

// optRow has optional value-type columns, where a zero value is a null.
type optRow struct {
	K  int64  `parquet:"k"`
	B  []byte `parquet:"b,optional"`
	T  int64  `parquet:"t,optional,timestamp(millisecond)"`
	S  string `parquet:"s,optional,dict"`
	I  int32  `parquet:"i,optional"`
	Rq string `parquet:"rq"`
}

// nullPatterns are runs of nulls and values that parquet-go v0.32.0's
// batch write got wrong (a value at offset k of a word followed by k-1
// more values, then nulls), and some it got right.
var nullPatterns = map[string][]bool{ // true: a value
	"null value null null":  {false, true, false, false},
	"two nulls, two values": {false, false, true, true, false, false, false},
	"value first":           {true, false, true, false, false},
	"all nulls":             {false, false, false},
	"across a word": func() []bool {
		v := make([]bool, 150)
		for i := range v {
			v[i] = i%7 == 3 || (i >= 60 && i < 70)
		}
		return v
	}(),
}

func optRows(pattern []bool) []optRow {
	rows := make([]optRow, len(pattern))
	for i, v := range pattern {
		rows[i] = optRow{K: int64(i), Rq: "r"}
		if v {
			rows[i].B, rows[i].T, rows[i].S, rows[i].I = []byte{1}, 5, "x", 7
		}
	}
	return rows
}

// TestOptionalZeroIsNull: every writer infohash has writes a zero value
// of an optional column as a null, whatever the pattern of nulls in the
// rows of one Write call.
func TestOptionalZeroIsNull(t *testing.T) {
	for name, pattern := range nullPatterns {
		t.Run(name, func(t *testing.T) {
			rows := optRows(pattern)
			path := filepath.Join(t.TempDir(), "o.parquet")
			w, err := Create[optRow](path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(rows); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			checkParquetNulls(t, data, pattern)

			var buf bytes.Buffer
			aw := NewArrowWriter[optRow]("buf", &buf)
			if err := aw.Write(rows); err != nil {
				t.Fatal(err)
			}
			if err := aw.Close(); err != nil {
				t.Fatal(err)
			}
			checkArrowNulls(t, buf.Bytes(), pattern)
		})
	}
}

func checkParquetNulls(t *testing.T, data []byte, pattern []bool) {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	for _, rg := range f.RowGroups() {
		for ci, c := range rg.ColumnChunks() {
			name := f.Schema().Columns()[ci][0]
			if name == "k" || name == "rq" {
				continue
			}
			var vals []parquet.Value
			pages := c.Pages()
			for {
				p, err := pages.ReadPage()
				if err != nil {
					break
				}
				v := make([]parquet.Value, p.NumValues())
				n, _ := p.Values().ReadValues(v)
				vals = append(vals, v[:n]...)
			}
			pages.Close()
			if len(vals) != len(pattern) {
				t.Fatalf("column %s: %d values, want %d", name, len(vals), len(pattern))
			}
			for i, v := range vals {
				if v.IsNull() == pattern[i] {
					t.Errorf("Parquet column %s row %d: null %v, want %v", name, i, v.IsNull(), !pattern[i])
				}
			}
		}
	}
}

func checkArrowNulls(t *testing.T, data []byte, pattern []bool) {
	t.Helper()
	r, err := ipc.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	row := 0
	for r.Next() {
		rec := r.Record()
		for ci, f := range rec.Schema().Fields() {
			if f.Name == "k" || f.Name == "rq" {
				continue
			}
			col := rec.Column(ci)
			for i := 0; i < col.Len(); i++ {
				if col.IsNull(i) == pattern[row+i] {
					t.Errorf("Arrow column %s row %d: null %v, want %v", f.Name, row+i, col.IsNull(i), !pattern[row+i])
				}
			}
		}
		row += int(rec.NumRows())
	}
	if row != len(pattern) {
		t.Fatalf("Arrow: %d rows, want %d", row, len(pattern))
	}
}
