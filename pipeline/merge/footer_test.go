package merge

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// withFooter wraps a Thrift-encoded footer as a Parquet file: magic,
// footer, its length, magic (no column data).
func withFooter(footer []byte) []byte {
	b := append([]byte("PAR1"), footer...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(footer)))
	return append(b, "PAR1"...)
}

// TestReadResultsHostileFooter: a results file whose footer lies about
// its own size, or declares lists and nesting its bytes cannot hold, is
// bad input with a one-line message, and costs merge almost nothing.
// merge once handed such files to parquet.OpenFile unchecked: the first
// two made it allocate the 3.7 and 4 GiB their last bytes claim (a fuzz
// worker taking 10 s to do so under memory pressure was killed by the
// fuzzer's watchdog, with no output), the list one died of "fatal error:
// runtime: out of memory" and the deep one of a goroutine stack over
// 1 GB.
func TestReadResultsHostileFooter(t *testing.T) {
	tests := hostileFooters()
	dir := t.TempDir()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "in.parquet")
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, _, err := readResults(input{name: "IN", path: path}, nil)
			runtime.ReadMemStats(&after)
			switch {
			case err == nil:
				t.Fatal("accepted")
			case exitcode.Of(err) != exitcode.Usage:
				t.Errorf("exit %d, want %d (bad input): %v", exitcode.Of(err), exitcode.Usage, err)
			case !strings.HasPrefix(err.Error(), "merge: IN: ") || !strings.Contains(err.Error(), tc.want) ||
				strings.Contains(err.Error(), "\n"):
				t.Errorf("error %q, want one line \"merge: IN: ...%s...\"", err, tc.want)
			}
			// The deep footer itself is 10 MB, read once.
			if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
				t.Errorf("reading a %d-byte file allocated %d MiB", len(tc.data), n>>20)
			}
		})
	}
}

// hostileFooters are Parquet files of a few bytes whose footers claim
// gigabytes, and the error each must get instead.
func hostileFooters() []struct {
	name string
	data []byte
	want string
} {
	// FileMetaData: version (i32) 1, then field 2 (schema) a list of
	// 2^31-1 structs, followed by a few bytes.
	list := append([]byte{0x15, 0x02, 0x19, 0xfc, 0xff, 0xff, 0xff, 0xff, 0x07}, make([]byte, 16)...)
	// An unknown struct field holding structs nested 5,000,000 deep.
	const depth = 5_000_000
	deep := append(append([]byte{0xfc}, bytes.Repeat([]byte{0x1c}, depth)...), make([]byte, depth+2)...)
	return []struct {
		name string
		data []byte
		want string
	}{
		{"footer length past the end (found by FuzzReadResults)", []byte("PAR1\xff\xff\xff\x7fage\xddPAR1"),
			"corrupt Parquet: the footer claims 3714410337 bytes in a 16-byte file"},
		{"footer length 4 GiB", []byte("PAR1\xff\xff\xff\xffPAR1"),
			"corrupt Parquet: the footer claims 4294967295 bytes in a 12-byte file"},
		{"list of 2^31-1 schema elements", withFooter(list),
			"corrupt Parquet: the footer is truncated or declares more than it holds"},
		{"structs nested 5,000,000 deep", withFooter(deep),
			"corrupt Parquet: footer: thrift structs nested deeper than"},
	}
}

// TestOtherDatasetHostileFooter: merge --from reads another dataset's
// files, which no manifest of ours vouches for; a damaged footer there is
// an error naming the file, and costs nothing (parquet.OpenFile, used
// before, allocated whatever the footer claimed).
func TestOtherDatasetHostileFooter(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range hostileFooters() {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "t.parquet")
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			readers := map[string]func() error{
				"torrents": func() error { return eachTorrent(rowio.UnrecordedFile(path), 0, func(*schema.Torrent) {}) },
				"hashes":   func() error { _, err := dataset.ReadFile[hashOnly](path); return err },
			}
			for name, read := range readers {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				err := read()
				runtime.ReadMemStats(&after)
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
					t.Errorf("%s: error %v, want one naming %s with %q", name, err, path, tc.want)
				}
				if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
					t.Errorf("%s: reading a %d-byte file allocated %d MiB", name, len(tc.data), n>>20)
				}
			}
		})
	}
}

// TestTorrentReadersCheckTheRecordedFooter: copyRows (compaction) and
// eachTorrent (merge --from) read a torrents file through the
// rowio.DataFile they are given, whose recorded footer checksum a
// damaged footer no longer matches: a *rowio.FooterError naming the
// file, before the footer is decoded.
func TestTorrentReadersCheckTheRecordedFooter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.parquet")
	w, err := rowio.Create[schema.Torrent](path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]schema.Torrent{{InfoHash: schema.Hash{1}, HashType: 1, Meta: schema.Meta{Name: new("x"), InfoBytes: []byte("d1:xi0ee")}}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := rowio.SumFooter(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	df := rowio.RecordedFile(path, sum)
	readers := map[string]func() error{
		"copyRows": func() error {
			var n int64
			return copyRows(df, make([]schema.Torrent, 4), rowio.NewParquetWriter[schema.Torrent](io.Discard), &n)
		},
		"eachTorrent": func() error { return eachTorrent(df, 0, func(*schema.Torrent) {}) },
	}
	for name, read := range readers {
		if err := read(); err != nil {
			t.Fatalf("%s: the intact file: %v", name, err)
		}
	}
	b[len(b)-9] ^= 1 // the footer's last byte
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, read := range readers {
		if fe, ok := errors.AsType[*rowio.FooterError](read()); !ok || fe.Path != path {
			t.Errorf("%s: the damaged file: %v, want a FooterError naming %s", name, read(), path)
		}
	}
}
