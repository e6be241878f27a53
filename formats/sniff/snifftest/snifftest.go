// Package snifftest makes compressed inputs for the tests of the
// commands that refuse them (sniff.Compression).
package snifftest

import (
	"bytes"
	"compress/gzip"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// The first bytes of what bzip2 and xz write (bzip2 -9, xz's stream
// header), which the standard library cannot write: enough to be told
// apart, not to be decompressed.
var (
	Bzip2Head = []byte("BZh91AY&SY\x4e\xec\xe8\x36")
	Bzip2None = []byte("BZh9\x17\x72\x45\x38\x50\x90\x00\x00\x00\x00") // an empty stream
	XzHead    = []byte{0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, 0x00, 0x04, 0xe6, 0xd6, 0xb4, 0x46}
)

// Gzip is b gzip-compressed with a name and a modification time, whose
// header (1f 8b 08 08 and the time) then holds no NUL in its first 8
// bytes: such a file was taken for a hash list.
func Gzip(t testing.TB, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Name, zw.ModTime = "hashes.txt", time.Unix(0x5f5f5f5f, 0)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if bytes.IndexByte(out.Bytes()[:8], 0) >= 0 {
		t.Fatalf("gzip header %x holds a NUL", out.Bytes()[:8])
	}
	return out.Bytes()
}

// Zstd is b zstd-compressed.
func Zstd(t testing.TB, b []byte) []byte {
	t.Helper()
	zw, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer zw.Close()
	return zw.EncodeAll(b, nil)
}
