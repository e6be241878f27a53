package sniff_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/sniff"
	"github.com/infohash/infohash/formats/sniff/snifftest"
)

// FuzzOf holds Of to its documented kinds, for the first HeadSize bytes
// of any input (what a command reads): Compressed exactly when
// CompressionOf names one, Parquet and Arrow only on their magic, Binary
// only with a NUL, Text only without one, Empty only for no bytes.
func FuzzOf(f *testing.F) {
	for _, b := range [][]byte{nil, []byte(hashLine), []byte("PAR1\x15\x00"), {0xff, 0xff, 0xff, 0xff, 0x78},
		[]byte("BZh9abcdef"), []byte("ab\x00cd"), snifftest.Bzip2Head, snifftest.Bzip2None, snifftest.XzHead, {0x1f, 0x8b, 8}} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		head := in[:min(sniff.HeadSize, len(in))]
		kind, c := sniff.Of(head), sniff.CompressionOf(head)
		if (kind == sniff.Compressed) != (c != nil) {
			t.Fatalf("%x: Of = %d but CompressionOf = %v", head, kind, c)
		}
		var ok bool
		switch kind {
		case sniff.Empty:
			ok = len(head) == 0
		case sniff.Compressed:
			ok = c.Name != "" && c.Cat != ""
		case sniff.Parquet:
			ok = bytes.HasPrefix(head, []byte("PAR1"))
		case sniff.Arrow:
			ok = bytes.HasPrefix(head, []byte{0xff, 0xff, 0xff, 0xff})
		case sniff.Binary:
			ok = bytes.IndexByte(head, 0) >= 0
		case sniff.Text:
			ok = len(head) > 0 && bytes.IndexByte(head, 0) < 0
		}
		if !ok {
			t.Fatalf("%x: Of = %d, which these bytes do not start or hold", head, kind)
		}
	})
}

// FuzzShellWord holds ShellWord to the shell's reading of it: as a POSIX
// shell splits and unquotes it, the word is one word and gives s back.
func FuzzShellWord(f *testing.F) {
	for _, s := range []string{"", "results/r-1.parquet", "a b", "it's", "''", `\`, "$HOME", "a\nb", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w := sniff.ShellWord(s)
		got, ok := unquoteShellWord(w)
		if !ok || got != s {
			t.Fatalf("ShellWord(%q) = %s, which a shell reads as %q (one word: %v)", s, w, got, ok)
		}
	})
}

// unquoteShellWord reads w as a POSIX shell reads one word made of plain
// characters, single-quoted strings and backslash-escaped characters: its
// value, and false when w is not exactly one word of those (an unquoted
// space, an expansion, a quote left open).
func unquoteShellWord(w string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(w); i++ {
		switch ch := w[i]; {
		case ch == '\'':
			end := strings.IndexByte(w[i+1:], '\'')
			if end < 0 {
				return b.String(), false
			}
			b.WriteString(w[i+1 : i+1+end])
			i += end + 1
		case ch == '\\':
			if i+1 == len(w) || w[i+1] == '\n' {
				return b.String(), false
			}
			b.WriteByte(w[i+1])
			i++
		case strings.IndexByte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./+,:=@%", ch) >= 0:
			b.WriteByte(ch)
		default:
			return b.String(), false
		}
	}
	return b.String(), len(w) > 0
}
