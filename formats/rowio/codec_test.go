package rowio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"
	kzstd "github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
)

func zstdFrame(t *testing.T, data []byte) []byte {
	t.Helper()
	e, err := kzstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	return e.EncodeAll(data, nil)
}

func TestCheckCodec(t *testing.T) {
	text := bytes.Repeat([]byte("infohash "), 10000) // 90000 bytes
	z := zstdFrame(t, text)
	// A frame header that declares 1 TiB: magic, descriptor (8-byte
	// content size, single segment), the size, then one empty last block.
	zLie := binary.LittleEndian.AppendUint32(nil, 0xfd2fb528)
	zLie = append(zLie, 0xe0)
	zLie = binary.LittleEndian.AppendUint64(zLie, 1<<40)
	zLie = append(zLie, 0x01, 0, 0)
	zShort := bytes.Clone(zLie)
	binary.LittleEndian.PutUint64(zShort[5:], 1000) // 1000 bytes from an empty block
	// Frames with a window descriptor (not single segment, no content
	// size) and one raw last block of 5 bytes: a 512 MiB window, and the
	// 8 MiB any page may have.
	zWindow := func(wd byte) []byte {
		f := binary.LittleEndian.AppendUint32(nil, 0xfd2fb528)
		return append(f, 0x00, wd, 5<<3|1, 0, 0, 'h', 'e', 'l', 'l', 'o')
	}
	var zs bytes.Buffer // a streaming encoder's frame: no content size, an 8 MiB window
	e, err := kzstd.NewWriter(&zs, kzstd.WithWindowSize(8<<20))
	if err != nil {
		t.Fatal(err)
	}
	e.Write([]byte("hello"))
	e.Close()
	var gz bytes.Buffer
	w := kgzip.NewWriter(&gz)
	w.Write(make([]byte, 1<<20))
	w.Close()
	snappyLie := binary.AppendUvarint(nil, 1<<40)
	// A snappy block of 100 bytes, one literal.
	snappy100 := append([]byte{100, 60 << 2, 99}, bytes.Repeat([]byte{'s'}, 100)...)
	var zsText bytes.Buffer // a streaming encoder's frame of text: no content size (flushed before the end)
	e, err = kzstd.NewWriter(&zsText)
	if err != nil {
		t.Fatal(err)
	}
	e.Write(text[:1000])
	e.Flush()
	e.Write(text[1000:])
	e.Close()
	if _, declared, err := zstdBound(bytes.NewReader(zsText.Bytes()), int64(zsText.Len()), 1<<30, 1<<30); err != nil || declared != -1 {
		t.Fatalf("streamed frame: declared %d, err %v; want no content size", declared, err)
	}
	tests := []struct {
		name  string
		codec format.CompressionCodec
		data  []byte
		usize int64
		lim   int64
		limit bool
		want  string
	}{
		{"zstd", format.Zstd, z, int64(len(text)), 1 << 20, false, ""},
		{"zstd size lie", format.Zstd, z, 1 << 25, 1 << 30, false, "hold at most"},
		{"zstd frame declares 1 TiB", format.Zstd, zLie, 0, 1 << 30, true, "zstd frame declares 1099511627776 bytes"},
		{"zstd frame over its blocks", format.Zstd, zShort, 0, 1 << 30, false, "its blocks hold at most 0"},
		{"zstd window of 512 MiB on a 5-byte page", format.Zstd, zWindow(19 << 3), 5, 1 << 30, true, "zstd window of 536870912 bytes (limit 8388608 for this page)"},
		{"zstd window of 8 MiB on a 5-byte page", format.Zstd, zWindow(13 << 3), 5, 1 << 30, false, ""},
		{"zstd stream", format.Zstd, zs.Bytes(), 5, 1 << 30, false, ""},
		{"zstd over the limit", format.Zstd, z, int64(len(text)), 1000, true, "(limit 1000)"},
		{"zstd truncated", format.Zstd, z[:len(z)/2], int64(len(text)), 1 << 30, false, "truncated"},
		{"not zstd", format.Zstd, []byte("hello, world"), 12, 1 << 30, false, "not a zstd frame"},
		{"snappy lie", format.Snappy, append(snappyLie, 0, 0, 0), 0, 1 << 50, false, "snappy block declares"},
		{"snappy limit", format.Snappy, append(snappyLie, 0, 0, 0), 0, 1 << 30, true, "(limit 1073741824)"},
		{"gzip", format.Gzip, gz.Bytes(), 1 << 20, 1 << 21, false, ""},
		{"gzip bomb", format.Gzip, gz.Bytes(), 1 << 20, 1 << 19, true, "decompresses to over 524288"},
		{"gzip size lie", format.Gzip, gz.Bytes(), 1 << 21, 1 << 22, false, "hold at most 1048576"},
		{"gzip garbage", format.Gzip, []byte("not gzip at all"), 10, 1 << 20, false, "gzip"},
		{"lzo", format.LZO, []byte{1}, 1, 1 << 20, false, "compression codec LZO"},
		// Data that decompresses to more than the header declares: parquet-go
		// decoded all of it and read the page's values from its start.
		{"zstd over its header", format.Zstd, z, 1000, 1 << 30, false, "decompress to 90000 or more"},
		{"zstd stream of text", format.Zstd, zsText.Bytes(), int64(len(text)), 1 << 30, false, ""},
		{"zstd stream over its header", format.Zstd, zsText.Bytes(), 1000, 1 << 30, false, "decompress to 1001 or more"},
		{"snappy", format.Snappy, snappy100, 100, 1 << 30, false, ""},
		{"snappy over its header", format.Snappy, snappy100, 10, 1 << 30, false, "decompress to 100 or more"},
		{"gzip over its header", format.Gzip, gz.Bytes(), 1000, 1 << 21, false, "decompress to 1048576 or more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lim := DefaultLimits()
			lim.MaxPageBytes = tt.lim
			s := pageScanner{r: bytes.NewReader(tt.data), lim: lim}
			err := s.checkCodec(tt.codec, 0, int64(len(tt.data)), tt.usize)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || errors.Is(err, ErrLimit) != tt.limit {
				t.Fatalf("err = %v, want %q (limit %v)", err, tt.want, tt.limit)
			}
		})
	}
}

// zstdBound is an upper bound: never below what a frame decodes to.
func TestZstdBoundIsABound(t *testing.T) {
	for _, n := range []int{0, 1, 1000, 200_000, 1 << 20} {
		data := bytes.Repeat([]byte{byte(n)}, n)
		for i := range data {
			if i%7 == 0 {
				data[i] = byte(i)
			}
		}
		z := zstdFrame(t, data)
		most, _, err := zstdBound(bytes.NewReader(z), int64(len(z)), 1<<30, 1<<30)
		if err != nil || most < int64(n) {
			t.Fatalf("%d bytes: bound %d, err %v", n, most, err)
		}
	}
}
