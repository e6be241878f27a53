package sniff_test

import (
	"testing"

	"github.com/infohash/infohash/formats/sniff"
	"github.com/infohash/infohash/formats/sniff/snifftest"
)

const hashLine = "0123456789abcdef0123456789abcdef01234567\n"

func TestOf(t *testing.T) {
	tests := []struct {
		name string
		head []byte
		want sniff.Kind
	}{
		{"empty", nil, sniff.Empty},
		{"gzip", snifftest.Gzip(t, []byte(hashLine)), sniff.Compressed},
		{"zstd", snifftest.Zstd(t, []byte(hashLine)), sniff.Compressed},
		{"bzip2", snifftest.Bzip2Head, sniff.Compressed},
		{"bzip2 empty stream", snifftest.Bzip2None, sniff.Compressed},
		{"xz", snifftest.XzHead, sniff.Compressed},
		{"parquet", []byte("PAR1\x15\x00\x15\x00"), sniff.Parquet},
		{"parquet cut short", []byte("PAR"), sniff.Text},
		{"arrow", []byte{0xff, 0xff, 0xff, 0xff, 0x78, 0, 0, 0}, sniff.Arrow},
		{"hash list", []byte(hashLine), sniff.Text},
		{"one letter", []byte("a"), sniff.Text},
		{"text starting BZh", []byte("BZh is no hash\n"), sniff.Text},
		{"BZh and a digit", []byte("BZh9abcdef"), sniff.Text},
		{"gzip's first byte alone", []byte{0x1f, 0x20}, sniff.Text},
		{"xz cut short", snifftest.XzHead[:5], sniff.Text},
		{"xz cut after its NUL", snifftest.XzHead[:6], sniff.Compressed},
		{"a NUL", []byte("ab\x00cd"), sniff.Binary},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			head := tt.head[:min(sniff.HeadSize, len(tt.head))] // what a command reads
			if got := sniff.Of(head); got != tt.want {
				t.Fatalf("Of(%x) = %d, want %d", head, got, tt.want)
			}
			if c := sniff.CompressionOf(head); (c != nil) != (tt.want == sniff.Compressed) {
				t.Fatalf("CompressionOf(%x) = %v", head, c)
			}
		})
	}
}
