package rowio

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestOpenFoldsColumnCase: a Parquet file or Arrow stream whose columns
// are named as the reader's but for case (INFO_HASH, as DuckDB matches
// it) is read under the reader's names; two columns that differ only in
// case are refused naming both, and a file of the exact names reads as
// before. Without the fold: missing required column "id".
func TestOpenFoldsColumnCase(t *testing.T) {
	type want struct {
		ID   []byte `parquet:"id"`
		Seen int64  `parquet:"seen_at"`
	}
	type upper struct {
		ID   []byte `parquet:"ID"`
		Seen int64  `parquet:"Seen_At"`
	}
	type both struct {
		ID    []byte `parquet:"id"`
		IDToo []byte `parquet:"Id"`
		Seen  int64  `parquet:"seen_at"`
	}
	rows := []want{{[]byte("a"), 1}, {[]byte("bb"), 2}}
	dir := t.TempDir()
	tests := []struct {
		name    string
		write   func(path string) error
		wantErr string
	}{
		{"exact names", func(p string) error { return writeAll(p, rows) }, ""},
		{"upper case", func(p string) error {
			return writeAll(p, []upper{{rows[0].ID, rows[0].Seen}, {rows[1].ID, rows[1].Seen}})
		}, ""},
		{"two columns differing in case", func(p string) error {
			return writeAll(p, []both{{rows[0].ID, nil, 1}, {rows[1].ID, nil, 2}})
		}, `wrong schema: columns "id" and "Id" differ only in case: which is id cannot be told`},
	}
	for _, tt := range tests {
		for _, format := range []string{"parquet", "arrow"} {
			t.Run(tt.name+" "+format, func(t *testing.T) {
				path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+"."+format)
				if err := tt.write(path); err != nil {
					t.Fatal(err)
				}
				var r *Reader[want]
				var err error
				if format == "parquet" {
					r, err = Open[want](path, nil)
				} else {
					b, rerr := os.ReadFile(path)
					if rerr != nil {
						t.Fatal(rerr)
					}
					r, err = OpenArrow[want](path, bytes.NewReader(b))
				}
				if tt.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
						t.Fatalf("err = %v, want %q", err, tt.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				got := make([]want, 4)
				n, _ := r.Read(got)
				if !slices.EqualFunc(got[:n], rows, func(a, b want) bool { return bytes.Equal(a.ID, b.ID) && a.Seen == b.Seen }) {
					t.Fatalf("read %v, want %v", got[:n], rows)
				}
			})
		}
	}
}

// writeAll writes rows to path: Parquet, or an Arrow IPC stream when
// path ends in .arrow.
func writeAll[T any](path string, rows []T) error {
	var stream bytes.Buffer
	out := path
	if strings.HasSuffix(path, ".arrow") {
		out = "-"
	}
	w, err := Create[T](out, &stream)
	if err != nil {
		return err
	}
	if err := w.Write(rows); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	if out == "-" {
		return os.WriteFile(path, stream.Bytes(), 0o644)
	}
	return nil
}
