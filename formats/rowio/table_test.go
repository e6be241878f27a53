package rowio

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

type tableFull struct {
	H [20]byte `parquet:"h"`
	A int32    `parquet:"a"`
	B []byte   `parquet:"b,optional"`
	C []string `parquet:"c,list"`
}

type tableNoB struct {
	H [20]byte `parquet:"h"`
	A int32    `parquet:"a"`
	C []string `parquet:"c,list"`
}

type tableNoC struct {
	H [20]byte `parquet:"h"`
	A int32    `parquet:"a"`
	B []byte   `parquet:"b,optional"`
}

type tableAInt64 struct {
	H [20]byte `parquet:"h"`
	A int64    `parquet:"a"`
	B []byte   `parquet:"b,optional"`
	C []string `parquet:"c,list"`
}

type tableBRequired struct {
	H [20]byte `parquet:"h"`
	A int32    `parquet:"a"`
	B []byte   `parquet:"b"`
	C []string `parquet:"c,list"`
}

type tableShortH struct {
	H [16]byte `parquet:"h"`
	A int32    `parquet:"a"`
	B []byte   `parquet:"b,optional"`
	C []string `parquet:"c,list"`
}

// openTableFile writes rows with parquet-go and opens the file.
func openTableFile[T any](t *testing.T, rows []T) *parquet.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.parquet")
	if err := parquet.WriteFile(path, rows); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := OpenParquet(f, st.Size(), nil, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	return pf
}

// TestCheckTable: a file of one of infohash's own tables has every column
// of the table, optional ones included, with the writer's type and
// levels; only the top-level columns named as lacking may be missing.
func TestCheckTable(t *testing.T) {
	want := parquet.SchemaOf(tableFull{})
	for _, tt := range []struct {
		name  string
		file  func(t *testing.T) *parquet.File
		lacks []string
		err   string // "" for none
	}{
		{"the table's schema", func(t *testing.T) *parquet.File { return openTableFile(t, []tableFull{{A: 1}}) }, nil, ""},
		{"an optional column missing", func(t *testing.T) *parquet.File { return openTableFile(t, []tableNoB{{A: 1}}) }, nil,
			`no column "b"`},
		{"a list missing", func(t *testing.T) *parquet.File { return openTableFile(t, []tableNoC{{A: 1}}) }, nil,
			`no column "c.list.element"`},
		{"a column an older format lacks", func(t *testing.T) *parquet.File { return openTableFile(t, []tableNoB{{A: 1}}) },
			[]string{"b"}, ""},
		{"a list an older format lacks", func(t *testing.T) *parquet.File { return openTableFile(t, []tableNoC{{A: 1}}) },
			[]string{"c"}, ""},
		{"lacking another column is no excuse", func(t *testing.T) *parquet.File { return openTableFile(t, []tableNoB{{A: 1}}) },
			[]string{"c"}, `no column "b"`},
		{"another physical type", func(t *testing.T) *parquet.File { return openTableFile(t, []tableAInt64{{A: 1}}) }, nil,
			`column "a" is INT64, want INT32`},
		{"required for optional", func(t *testing.T) *parquet.File { return openTableFile(t, []tableBRequired{{A: 1}}) }, nil,
			`column "b" has definition and repetition levels 0 and 0, want 1 and 0`},
		{"another fixed size", func(t *testing.T) *parquet.File { return openTableFile(t, []tableShortH{{A: 1}}) }, nil,
			`column "h" is FIXED_LEN_BYTE_ARRAY(16), want (20)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckTable(tt.file(t), want, "Parquet", tt.lacks...)
			switch {
			case tt.err == "" && err != nil:
				t.Fatal(err)
			case tt.err != "" && (err == nil || !strings.HasPrefix(err.Error(), "corrupt Parquet: "+tt.err)):
				t.Fatalf("%v, want corrupt Parquet: %s", err, tt.err)
			}
		})
	}
}
