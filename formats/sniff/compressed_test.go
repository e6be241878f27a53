package sniff_test

import (
	"testing"

	"github.com/infohash/infohash/formats/sniff"
	"github.com/infohash/infohash/formats/sniff/snifftest"
)

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
