package statecol

import (
	"os"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
)

// TestReadPlainHashes: the info_hash chunks of our writer's files are read
// straight into the caller's hashes (every row group), and a chunk that
// fails a check is left to the page reader, which reports the damage as
// before.
func TestReadPlainHashes(t *testing.T) {
	defer func(n int) { rowGroupRows = n }(rowGroupRows)
	rowGroupRows = 1000
	rows := randomStates(2500, 5, false)
	f, p := openStateFile(t, rows)
	for i, rg := range f.RowGroups() {
		buf := make([]byte, 20*rg.NumRows())
		if !f.readPlainHashes(i, buf) {
			t.Fatalf("row group %d: not read directly", i)
		}
		for r := range int(rg.NumRows()) {
			if h := rows[1000*i+r].InfoHash; string(buf[20*r:20*r+20]) != string(h[:]) {
				t.Fatalf("row group %d row %d: %x, want %x", i, r, buf[20*r:20*r+20], h)
			}
		}
	}
	got, err := f.AppendHashes(nil)
	f.Close()
	if err != nil || len(got) != len(rows) {
		t.Fatalf("AppendHashes: %d hashes, %v", len(got), err)
	}
	for i := range rows {
		if got[i] != rows[i].InfoHash {
			t.Fatalf("hash %d: %x, want %x", i, got[i], rows[i].InfoHash)
		}
	}

	// Damage: readPlainHashes refuses the chunk, and AppendHashes answers
	// what the page reader does (an error, or hashes if the flipped bit is
	// in a header field the page reader does not use).
	for _, tc := range []struct {
		name string
		at   func(off, hdr int64) int64 // the byte to flip, from the second row group's chunk
	}{
		{"a value", func(off, hdr int64) int64 { return off + hdr + 700 }},
		{"the header", func(off, hdr int64) int64 { return off + 3 }},
		{"the CRC", func(off, hdr int64) int64 { return off + hdr - 2 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			f, _ := openStateFile(t, rows)
			m := f.pf.Metadata().RowGroups[1].Columns[cInfoHash].MetaData
			f.Close()
			b[tc.at(m.DataPageOffset, m.TotalCompressedSize-20*1000)] ^= 0x10
			q := p + ".damaged"
			if err := os.WriteFile(q, b, 0o644); err != nil {
				t.Fatal(err)
			}
			d, err := Open(rowio.UnrecordedFile(q))
			if err != nil {
				return // the open's page header check caught it
			}
			defer d.Close()
			if d.readPlainHashes(1, make([]byte, 20*1000)) {
				t.Fatal("a damaged chunk was read directly")
			}
			want := make([]byte, 20*1000)
			c, _ := d.Column(d.RowGroups()[1], "info_hash")
			wantErr := Fixed(c, 20, want)
			got, err := d.AppendHashes(nil)
			switch {
			case wantErr != nil:
				if err == nil || !strings.Contains(err.Error(), wantErr.Error()) || !strings.Contains(err.Error(), q) {
					t.Fatalf("err %v, want one naming %s and %q", err, q, wantErr)
				}
			case err != nil || len(got) != len(rows):
				t.Fatalf("%d hashes, %v; the page reader read them", len(got), err)
			case string(got[1000][:]) != string(want[:20]):
				t.Fatalf("row 1000: %x, the page reader %x", got[1000], want[:20])
			}
			t.Logf("page reader: %v", wantErr)
		})
	}
}
