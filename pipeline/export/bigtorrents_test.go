package export

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/schema"
)

// TestParquetSinkBoundsRowGroups writes 18 torrents of 4 MiB through a
// Parquet export sink: row groups end by bytes as well as by rows (by
// rows alone all 18 were buffered in one), and info_bytes has no min/max.
func TestParquetSinkBoundsRowGroups(t *testing.T) {
	if testing.Short() {
		t.Skip("exports 72 MiB of metadata")
	}
	const n, size = 18, 4 << 20
	var out bytes.Buffer
	o := DefaultOptions()
	o.Output, o.Format, o.Stdout = "-", "parquet", &out
	s, err := newSink[schema.Torrent](o)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		info := make([]byte, size)
		rand.NewChaCha8([32]byte{byte(i)}).Read(info)
		if err := s.write([]schema.Torrent{{InfoHash: schema.Hash{byte(i)}, Meta: schema.Meta{InfoBytes: info}}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.close(); err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(out.Bytes()), int64(out.Len()))
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := pf.Schema().Lookup("info_bytes")
	md := pf.Metadata()
	if len(md.RowGroups) < 2 {
		t.Errorf("%d torrents of %d MiB in %d row group(s), want a row group per 64 MiB", n, size>>20, len(md.RowGroups))
	}
	for g, rg := range md.RowGroups {
		if st := rg.Columns[leaf.ColumnIndex].MetaData.Statistics; st.MinValue != nil || st.MaxValue != nil {
			t.Errorf("row group %d: info_bytes has min/max statistics", g)
		}
	}
	if out.Len() > n*size*13/10 {
		t.Errorf("export of %d bytes for %d bytes of metadata", out.Len(), n*size)
	}
}
