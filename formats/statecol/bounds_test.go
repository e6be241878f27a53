package statecol_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go/format"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/rowio/rowiotest"
	"github.com/infohash/infohash/formats/statecol"
)

// TestInt64BoundsDamagedStatistics: a chunk whose footer statistics hold
// a min or max of the wrong length (a footer damaged on disk, in a file
// no manifest checksum covers) has no bounds: Int64Bounds reports none,
// and the caller reads the values, instead of panicking in parquet-go
// (merge's archive scan runs outside any recover, so it crashed merge).
func TestInt64BoundsDamagedStatistics(t *testing.T) {
	var good bytes.Buffer
	if err := statecol.WriteState(&good, sample(300)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		col  string
		edit func(*format.Statistics)
	}{
		{"last_seen min of 4 bytes", "last_seen", func(s *format.Statistics) { s.MinValue = s.MinValue[:4] }},
		{"last_seen max empty", "last_seen", func(s *format.Statistics) { s.MaxValue = []byte{} }},
		{"attempts min of 8 bytes", "attempts", func(s *format.Statistics) { s.MinValue = append(s.MinValue, 0, 0, 0, 0) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := rowiotest.EditFooter(t, good.Bytes(), func(md *format.FileMetaData) {
				for i := range md.RowGroups {
					for k := range md.RowGroups[i].Columns {
						m := &md.RowGroups[i].Columns[k].MetaData
						if len(m.PathInSchema) == 1 && m.PathInSchema[0] == tc.col {
							tc.edit(&m.Statistics)
						}
					}
				}
			})
			p := filepath.Join(t.TempDir(), "s.parquet")
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := statecol.Open(rowio.UnrecordedFile(p))
			if err != nil {
				t.Skipf("refused at open: %v", err) // as good: nothing reads its statistics
			}
			defer f.Close()
			for _, rg := range f.RowGroups() {
				c, _ := f.Column(rg, tc.col)
				if _, _, ok := statecol.Int64Bounds(c, rg.NumRows()); ok {
					t.Fatalf("%s: bounds from damaged statistics", tc.col)
				}
			}
		})
	}
}
