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

func TestCompressionOf(t *testing.T) {
	tests := []struct {
		name, want string
		head       []byte
	}{
		{"gzip", "gzip", snifftest.Gzip(t, []byte(hashLine))},
		{"zstd", "zstd", snifftest.Zstd(t, []byte(hashLine))},
		{"bzip2", "bzip2", snifftest.Bzip2Head},
		{"xz", "xz", snifftest.XzHead},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := sniff.CompressionOf(tt.head[:sniff.HeadSize])
			if c == nil || c.Name != tt.want {
				t.Fatalf("CompressionOf(%x) = %v, want %s", tt.head[:sniff.HeadSize], c, tt.want)
			}
		})
	}
}

func TestRefuse(t *testing.T) {
	gz := sniff.CompressionOf(snifftest.Gzip(t, []byte(hashLine)))
	xz := sniff.CompressionOf(snifftest.XzHead)
	tests := []struct {
		name string
		c    *sniff.Compression
		h    sniff.Hint
		want string
	}{
		{"file", gz, sniff.Hint{Name: "in.gz", Path: "in.gz", Cmd: "infohash dedup --data ./ih -"},
			"in.gz: gzip-compressed input; decompress it first (zcat in.gz | infohash dedup --data ./ih -)"},
		{"a name with a quote and a space", xz, sniff.Hint{Name: "it's in", Path: "/tmp/it's in", Cmd: "infohash merge --data d -"},
			`it's in: xz-compressed input; decompress it first (xzcat '/tmp/it'\''s in' | infohash merge --data d -)`},
		{"stream, a note", gz, sniff.Hint{Name: "stdin", Cmd: "infohash fetch - -o r.parquet", Note: "Parquet jobs: into a file, named as JOBS"},
			"stdin: gzip-compressed input; decompress it first (... | zcat | infohash fetch - -o r.parquet; Parquet jobs: into a file, named as JOBS)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.Refuse(tt.h).Error(); got != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestShellWord(t *testing.T) {
	tests := map[string]string{
		"results/r-1.parquet": "results/r-1.parquet",
		"":                    "''",
		"a b":                 "'a b'",
		"it's":                `'it'\''s'`,
		"$HOME/x":             "'$HOME/x'",
		"a;rm -rf x":          "'a;rm -rf x'",
		"/srv/ih@2026":        "/srv/ih@2026",
	}
	for in, want := range tests {
		t.Run(in, func(t *testing.T) {
			if got := sniff.ShellWord(in); got != want {
				t.Fatalf("ShellWord(%q) = %s, want %s", in, got, want)
			}
		})
	}
}
