package statecol

import (
	"path/filepath"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// TestAllNull: a column chunk whose statistics count a null for every
// row is all null, from infohash's state writer and from parquet-go's;
// one with a value, or a required column, is not.
func TestAllNull(t *testing.T) {
	v1 := randomStates(3, 1, false)
	for i := range v1 {
		v1[i].HashType, v1[i].InfoHashV2 = schema.HashV1, nil
	}
	withV2 := append([]schema.State(nil), v1...)
	withV2[1].HashType, withV2[1].InfoHashV2 = schema.HashV2, make([]byte, 32)
	byParquetGo := func(t *testing.T, rows []schema.State) *File {
		t.Helper()
		p := filepath.Join(t.TempDir(), "s.parquet")
		w, err := rowio.Create[schema.State](p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		f, err := Open(rowio.UnrecordedFile(p))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	byStatecol := func(t *testing.T, rows []schema.State) *File {
		t.Helper()
		f, _ := openStateFile(t, rows)
		return f
	}
	tests := []struct {
		name   string
		open   func(*testing.T, []schema.State) *File
		rows   []schema.State
		column string
		want   bool
	}{
		{"statecol, no v2", byStatecol, v1, "info_hash_v2", true},
		{"statecol, one v2", byStatecol, withV2, "info_hash_v2", false},
		{"statecol, required", byStatecol, v1, "info_hash", false},
		{"parquet-go, no v2", byParquetGo, v1, "info_hash_v2", true},
		{"parquet-go, one v2", byParquetGo, withV2, "info_hash_v2", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.open(t, tt.rows)
			defer f.Close()
			for _, rg := range f.RowGroups() {
				c, _ := f.Column(rg, tt.column)
				if got := AllNull(c, rg.NumRows()); got != tt.want {
					t.Errorf("AllNull(%s) = %v, want %v", tt.column, got, tt.want)
				}
			}
		})
	}
}
