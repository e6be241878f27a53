package statecol_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go/format"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/rowio/rowiotest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/statecol"
)

// TestDamagedRowCount: a state file whose footer's row count was damaged
// (one varint) is refused before anything is sized from it, by the
// trusted readers (the dataset's own files) as by the untrusted one.
// ReadStateFile allocated the count's rows at once: 240 bytes each, so
// 2^31 rows died with "fatal error: out of memory", and 2^20 took 240 MiB
// before failing.
func TestDamagedRowCount(t *testing.T) {
	var good bytes.Buffer
	if err := statecol.WriteState(&good, sample(300)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		edit func(*format.FileMetaData)
		want string
	}{
		{"one more", func(md *format.FileMetaData) { md.NumRows++ }, "the footer declares 301 rows, its row groups 300"},
		{"2^20", func(md *format.FileMetaData) { md.NumRows = 1 << 20 }, "the footer declares 1048576 rows, its row groups 300"},
		{"a row group's", func(md *format.FileMetaData) { md.RowGroups[0].NumRows = 1 << 20 }, "the footer declares 300 rows, its row groups 1048576"},
	}
	readers := map[string]func(p string) error{
		"ReadStateFile": func(p string) error { _, err := statecol.ReadStateFile(rowio.UnrecordedFile(p)); return err },
		"ReadState": func(p string) error {
			return statecol.ReadState(rowio.UnrecordedFile(p), func([]schema.State) error { return nil })
		},
		"ReadUntrustedStateFile": func(p string) error { _, err := statecol.ReadUntrustedStateFile(rowio.UnrecordedFile(p)); return err },
	}
	for _, tt := range tests {
		p := filepath.Join(t.TempDir(), "state.parquet")
		if err := os.WriteFile(p, rowiotest.EditFooter(t, good.Bytes(), tt.edit), 0o644); err != nil {
			t.Fatal(err)
		}
		for name, read := range readers {
			t.Run(fmt.Sprintf("%s %s", tt.name, name), func(t *testing.T) {
				before := allocated()
				err := read(p)
				if grew := allocated() - before; grew > maxDamagedAlloc {
					t.Errorf("allocated %d MiB", grew>>20)
				}
				if err == nil || !strings.Contains(err.Error(), p+": corrupt Parquet") || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("err %v, want a corrupt file naming %s and %q", err, p, tt.want)
				}
			})
		}
	}
}

// TestDamagedPageHeader: a state file whose first page header's sizes or
// value count were damaged (a varint grown) is refused before parquet-go
// sizes a buffer from them, by the trusted readers too: a compressed size
// of 2e9 made ReadStateFile allocate 2.8 GB before failing with "unexpected
// EOF", which on a small machine is a fatal out of memory.
func TestDamagedPageHeader(t *testing.T) {
	var good bytes.Buffer
	if err := statecol.WriteState(&good, sample(300)); err != nil {
		t.Fatal(err)
	}
	b := good.Bytes()
	// The first page header, after "PAR1": type (0x15 0x00), then
	// uncompressed_page_size (0x15, a zigzag varint), compressed_page_size
	// and crc (0x15 and a varint each), and a data_page_header whose first
	// field is num_values (0x1c 0x15, a varint).
	field := func(at int) (start, end int) {
		if b[at] != 0x15 {
			t.Fatalf("byte %d is %#x, not an i32 field", at, b[at])
		}
		end = at + 1
		for b[end]&0x80 != 0 {
			end++
		}
		return at + 1, end + 1
	}
	usize, uend := field(6)
	csize, cend := field(uend)
	_, crcEnd := field(cend)
	if b[crcEnd] != 0x1c {
		t.Fatalf("no data page header at %d", crcEnd)
	}
	values, _ := field(crcEnd + 1)
	// grow sets the varint at start to v, and moves the column chunks
	// after it in the footer by the bytes it grew.
	grow := func(start int, v int64) []byte {
		_, end := field(start - 1)
		out := append(bytes.Clone(b[:start]), binary.AppendUvarint(nil, uint64(v)<<1)...)
		out = append(out, b[end:]...)
		k := int64(len(out) - len(b))
		return rowiotest.EditFooter(t, out, func(md *format.FileMetaData) {
			for i := range md.RowGroups {
				for j := range md.RowGroups[i].Columns {
					c := &md.RowGroups[i].Columns[j].MetaData
					if c.DataPageOffset == 4 {
						c.TotalCompressedSize += k
						continue
					}
					c.DataPageOffset += k
					if c.DictionaryPageOffset != 0 {
						c.DictionaryPageOffset += k
					}
				}
			}
		})
	}
	tests := []struct {
		name string
		file []byte
		want string
	}{
		{"compressed size 2e9", grow(csize, 2e9), "page at offset 4: 2000000000 bytes run past the end of the column chunk"},
		{"compressed size 1 GiB", grow(csize, 1<<30), "page at offset 4: 1073741824 bytes run past the end of the column chunk"},
		{"uncompressed size 2e9", grow(usize, 2e9), "over a reading limit: row group 0 column \"info_hash\": page at offset 4 declares 2000000000 bytes"},
		{"values 2e9", grow(values, 2e9), "over a reading limit: row group 0 column \"info_hash\": page at offset 4 declares 2000000000 values"},
	}
	readers := map[string]func(p string) error{
		"ReadStateFile": func(p string) error { _, err := statecol.ReadStateFile(rowio.UnrecordedFile(p)); return err },
		"ReadState": func(p string) error {
			return statecol.ReadState(rowio.UnrecordedFile(p), func([]schema.State) error { return nil })
		},
		"ReadUntrustedStateFile": func(p string) error { _, err := statecol.ReadUntrustedStateFile(rowio.UnrecordedFile(p)); return err },
	}
	for _, tt := range tests {
		p := filepath.Join(t.TempDir(), "state.parquet")
		if err := os.WriteFile(p, tt.file, 0o644); err != nil {
			t.Fatal(err)
		}
		for name, read := range readers {
			t.Run(fmt.Sprintf("%s %s", tt.name, name), func(t *testing.T) {
				before := allocated()
				err := read(p)
				if grew := allocated() - before; grew > maxDamagedAlloc {
					t.Errorf("allocated %d MiB", grew>>20)
				}
				if err == nil || !strings.HasPrefix(err.Error(), p+": ") || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("err %v, want one naming %s and %q", err, p, tt.want)
				}
			})
		}
	}
}
