package statecol

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/rowio"
)

// TestPageChecksums: every page a state file holds carries a CRC, so one
// damaged byte in any column's data is an error for every reader, not a
// changed value (a byte of an uncompressed info_hash page used to read
// back as another hash).
func TestPageChecksums(t *testing.T) {
	rows := randomStates(3000, 9, false)
	var buf bytes.Buffer
	if err := WriteState(&buf, rows); err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	chunks := pf.Metadata().RowGroups[0].Columns
	if len(chunks) == 0 {
		t.Fatal("no column chunks")
	}
	for _, c := range chunks {
		name := strings.Join(c.MetaData.PathInSchema, ".")
		t.Run(name, func(t *testing.T) {
			// The last byte of the chunk is page data: its last page's.
			end := c.MetaData.DataPageOffset + c.MetaData.TotalCompressedSize
			if c.MetaData.DictionaryPageOffset > 0 && c.MetaData.DictionaryPageOffset < c.MetaData.DataPageOffset {
				end = c.MetaData.DictionaryPageOffset + c.MetaData.TotalCompressedSize
			}
			damaged := bytes.Clone(buf.Bytes())
			damaged[end-1] ^= 0x10
			path := filepath.Join(t.TempDir(), "s.parquet")
			if err := os.WriteFile(path, damaged, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := ReadStateFile(rowio.UnrecordedFile(path)); err == nil || !strings.Contains(err.Error(), "checksum") {
				t.Fatalf("reading a damaged %s page: %v, want a checksum error", name, err)
			}
		})
	}
}
