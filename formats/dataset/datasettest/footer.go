package datasettest

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"
)

// FooterString returns the offset in the Parquet file at path of the nth
// (from 0) occurrence in its footer of the string s as Thrift's compact
// protocol writes it: a one-byte length (s is shorter than 128 bytes),
// then s. The offset is that of the length byte. A column's name occurs
// first in the schema (nth 0), then in each column chunk's path_in_schema,
// row group after row group.
func FooterString(t testing.TB, path, s string, nth int) int64 {
	t.Helper()
	if len(s) >= 128 {
		t.Fatalf("FooterString: %q is too long", s)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 12 {
		t.Fatalf("%s: %d bytes is no Parquet file", path, len(b))
	}
	n := int(binary.LittleEndian.Uint32(b[len(b)-8:]))
	start := len(b) - 8 - n
	footer := b[start : len(b)-8]
	pat := append([]byte{byte(len(s))}, s...)
	at := 0
	for k := 0; ; k++ {
		i := bytes.Index(footer[at:], pat)
		if i < 0 {
			t.Fatalf("%s: the footer holds %q %d times, not %d", path, s, k, nth+1)
		}
		if k == nth {
			return int64(start + at + i)
		}
		at += i + 1
	}
}

// FlipBits flips the bits of mask in the byte at offset off of the file
// at path, as bit rot would, after checking that the byte is was (so
// that a change in how the file is written fails the test rather than
// damaging another byte).
func FlipBits(t testing.TB, path string, off int64, was, mask byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if off < 0 || off >= int64(len(b)) || b[off] != was {
		t.Fatalf("%s: byte %d is not %#02x", path, off, was)
	}
	b[off] ^= mask
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// RenameInFooter flips the lowest bit of the last byte of the nth
// occurrence of name in the footer of the Parquet file at path (see
// FooterString): "hash_type" becomes "hash_typd", a column of another
// name.
func RenameInFooter(t testing.TB, path, name string, nth int) {
	t.Helper()
	off := FooterString(t, path, name, nth) + int64(len(name))
	FlipBits(t, path, off, name[len(name)-1], 0x01)
}
