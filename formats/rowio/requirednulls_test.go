package rowio

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/rowio/rowiotest"
)

// TestRequiredColumnWithNulls: a column the footer declares REQUIRED
// whose v2 page counts nulls holds fewer values than rows; that is a
// corrupt file, said as dedup's decoder says it, not rows whose values
// parquet-go shifted up and left empty at the end.
func TestRequiredColumnWithNulls(t *testing.T) {
	p := filepath.Join(t.TempDir(), "jobs.parquet")
	if err := os.WriteFile(p, rowiotest.RequiredWithNulls(t), 0o644); err != nil {
		t.Fatal(err)
	}
	type row struct {
		InfoHash []byte `parquet:"info_hash"`
	}
	err := readAllFile[row](p)
	want := p + `: corrupt Parquet: row group 0 column "info_hash": fewer values than rows: its pages hold 2 values for 3 rows`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
}

// Rows of the files of TestRequiredColumnWithNullsV1: column x OPTIONAL
// (a zero value is written as null), then declared REQUIRED.
type (
	nullBytes struct {
		X []byte `parquet:"x,optional"` // DELTA_LENGTH_BYTE_ARRAY
		Y int32  `parquet:"y"`
	}
	nullPlainBytes struct {
		X []byte `parquet:"x,optional,plain"`
		Y int32  `parquet:"y"`
	}
	nullFixed struct {
		X [20]byte `parquet:"x,optional"`
		Y int32    `parquet:"y"`
	}
	nullInt64 struct {
		X int64 `parquet:"x,optional"`
		Y int32 `parquet:"y"`
	}
	nullDict struct {
		X string `parquet:"x,optional,dict"`
		Y int32  `parquet:"y"`
	}
)

// TestRequiredColumnWithNullsV1: a REQUIRED column with nulls in a v1
// data page, whose header counts no nulls (its definition levels lead
// its data), is said as the v2 page is: fewer values than rows, naming
// the file, row group and column. parquet-go's decoder read the levels as
// values ("DELTA_LENGTH_BYTE_ARRAY: invalid number of mini block (0)",
// or values shifted). The same column written REQUIRED reads as it did.
func TestRequiredColumnWithNullsV1(t *testing.T) {
	v1 := parquet.DataPageVersion(1)
	zstd := parquet.Compression(&parquet.Zstd)
	h := func(b byte) (a [20]byte) { a[0] = b; return }
	// Rows 1 and 3 of 4 are null: 2 values.
	tests := []struct {
		name string
		file func(t *testing.T) []byte
	}{
		{"byte array, delta", func(t *testing.T) []byte {
			return rowiotest.Write(t, []nullBytes{{X: []byte("a"), Y: 1}, {Y: 2}, {X: []byte("bb"), Y: 3}, {Y: 4}}, v1)
		}},
		{"byte array, delta, zstd", func(t *testing.T) []byte {
			return rowiotest.Write(t, []nullBytes{{X: []byte("a"), Y: 1}, {Y: 2}, {X: []byte("bb"), Y: 3}, {Y: 4}}, v1, zstd)
		}},
		{"byte array, plain", func(t *testing.T) []byte {
			return rowiotest.Write(t, []nullPlainBytes{{X: []byte("a"), Y: 1}, {Y: 2}, {X: []byte("bb"), Y: 3}, {Y: 4}}, v1)
		}},
		{"fixed, plain", func(t *testing.T) []byte {
			return rowiotest.Write(t, []nullFixed{{X: h(1), Y: 1}, {Y: 2}, {X: h(2), Y: 3}, {Y: 4}}, v1)
		}},
		{"fixed, plain, zstd", func(t *testing.T) []byte {
			return rowiotest.Write(t, []nullFixed{{X: h(1), Y: 1}, {Y: 2}, {X: h(2), Y: 3}, {Y: 4}}, v1, zstd)
		}},
		{"int64", func(t *testing.T) []byte {
			return rowiotest.Write(t, []nullInt64{{X: 7, Y: 1}, {Y: 2}, {X: 9, Y: 3}, {Y: 4}}, v1)
		}},
		{"dictionary", func(t *testing.T) []byte {
			return rowiotest.Write(t, []nullDict{{X: "a", Y: 1}, {Y: 2}, {X: "b", Y: 3}, {Y: 4}}, v1)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "in.parquet")
			if err := os.WriteFile(p, rowiotest.MarkRequired(t, tt.file(t), "x"), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			st, _ := f.Stat()
			_, err = OpenParquet(f, st.Size(), nil, DefaultLimits())
			want := `corrupt Parquet: row group 0 column "x": fewer values than rows: its pages hold 2 values for 4 rows`
			if err == nil || err.Error() != want {
				t.Fatalf("err = %v\nwant %s", err, want)
			}
		})
	}
}

// TestRequiredColumnV1 reads REQUIRED columns of every kind above written
// in v1 pages by a writer that knows it (no levels): v1Nulls takes none
// of their data for levels.
func TestRequiredColumnV1(t *testing.T) {
	type row struct {
		B  []byte   `parquet:"b"`
		P  []byte   `parquet:"p,plain"`
		F  [20]byte `parquet:"f"`
		I  int64    `parquet:"i"`
		D  string   `parquet:"d,dict"`
		T  bool     `parquet:"t"`
		I2 int32    `parquet:"i2,plain"`
	}
	var rows []row
	for i := range 1000 {
		// Values whose bytes could pass for levels: a length of 2 (the
		// size of a level run), and runs.
		rows = append(rows, row{B: []byte{byte(i), 1}, P: []byte{4, 1}, F: [20]byte{byte(i)}, I: int64(i % 3), D: string(rune('a' + i%3)), T: i%2 == 0, I2: 2})
	}
	for _, zstd := range []bool{false, true} {
		opts := []parquet.WriterOption{parquet.DataPageVersion(1), parquet.PageBufferSize(512)}
		if zstd {
			opts = append(opts, parquet.Compression(&parquet.Zstd))
		}
		p := filepath.Join(t.TempDir(), "in.parquet")
		if err := os.WriteFile(p, rowiotest.Write(t, rows, opts...), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := Open[row](p, nil)
		if err != nil {
			t.Fatalf("zstd %v: %v", zstd, err)
		}
		got := make([]row, 2000)
		n, _ := r.Read(got)
		r.Close()
		if n != len(rows) || got[999].I != 0 || got[999].D != "a" || got[998].F[0] != byte(998%256) {
			t.Fatalf("zstd %v: read %d rows, want %d as written", zstd, n, len(rows))
		}
	}
}
