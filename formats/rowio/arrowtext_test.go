package rowio

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// textHashRow is a row as DuckDB or pyarrow may write hashes: text.
type textHashRow struct {
	InfoHash   string `parquet:"info_hash"`
	InfoHashV2 string `parquet:"info_hash_v2,optional"`
}

// blobHashRow reads hash columns as bytes.
type blobHashRow struct {
	InfoHash   []byte `parquet:"info_hash"`
	InfoHashV2 []byte `parquet:"info_hash_v2,optional"`
}

// TestOpenArrowText: the []byte fields named take a string column, read
// as its values' bytes, and ArrowTextType says which columns are text; a
// string column for a []byte field not named stays a schema error.
func TestOpenArrowText(t *testing.T) {
	stream := func(t *testing.T, rows any) *bytes.Buffer {
		t.Helper()
		var b bytes.Buffer
		var err error
		switch rows := rows.(type) {
		case []textHashRow:
			w := NewArrowWriter[textHashRow]("test", &b)
			if err = w.Write(rows); err == nil {
				err = w.Close()
			}
		case []blobHashRow:
			w := NewArrowWriter[blobHashRow]("test", &b)
			if err = w.Write(rows); err == nil {
				err = w.Close()
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		return &b
	}
	tests := []struct {
		name       string
		rows       any
		text       []string
		want       []blobHashRow // nil: ErrSchema
		hashT, v2T string
	}{
		{"text named", []textHashRow{{"ab01", "cd"}, {"ef", ""}}, []string{"info_hash", "info_hash_v2"},
			[]blobHashRow{{[]byte("ab01"), []byte("cd")}, {[]byte("ef"), nil}}, "utf8", "utf8"},
		{"text not named", []textHashRow{{"ab01", "cd"}}, []string{"info_hash"}, nil, "", ""},
		{"none named", []textHashRow{{"ab01", "cd"}}, nil, nil, "", ""},
		{"binary", []blobHashRow{{[]byte{1, 2}, []byte{3}}}, []string{"info_hash", "info_hash_v2"},
			[]blobHashRow{{[]byte{1, 2}, []byte{3}}}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := OpenArrowText[blobHashRow]("test", stream(t, tt.rows), tt.text...)
			if tt.want == nil {
				if !errors.Is(err, ErrSchema) {
					t.Fatalf("err %v, want an ErrSchema", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if h, v2 := ArrowTextType(r.ArrowSchema(), "info_hash"), ArrowTextType(r.ArrowSchema(), "info_hash_v2"); h != tt.hashT || v2 != tt.v2T {
				t.Fatalf("ArrowTextType %q, %q; want %q, %q", h, v2, tt.hashT, tt.v2T)
			}
			buf := make([]blobHashRow, 4)
			n, err := r.Read(buf)
			if err != nil && !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			if n != len(tt.want) {
				t.Fatalf("%d rows, want %d", n, len(tt.want))
			}
			for i, w := range tt.want {
				if g := buf[i]; !bytes.Equal(g.InfoHash, w.InfoHash) || !bytes.Equal(g.InfoHashV2, w.InfoHashV2) {
					t.Fatalf("row %d: %q %q, want %q %q", i, g.InfoHash, g.InfoHashV2, w.InfoHash, w.InfoHashV2)
				}
			}
		})
	}
	if ArrowTextType(nil, "info_hash") != "" {
		t.Fatal("ArrowTextType(nil) is not empty")
	}
}
