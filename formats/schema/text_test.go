package schema

import (
	"testing"
	"unicode/utf8"
)

func TestEscapeInvalidUTF8(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"valid", "in-1.parquet", "in-1.parquet"},
		{"valid, not ASCII", "données/été.parquet", "données/été.parquet"},
		{"one bad byte", "bad\xffname,\"x\".txt", `bad\xffname,"x".txt`},
		{"a cut sequence", "caf\xc3", `caf\xc3`},
		{"surrogate", "\xed\xa0\x80x", `\xed\xa0\x80x`},
		{"bad and good", "\xfe\xe9t\xc3\xa9", `\xfe\xe9té`},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := EscapeInvalidUTF8(tt.in)
			if got != tt.want || !utf8.ValidString(got) {
				t.Fatalf("EscapeInvalidUTF8(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
