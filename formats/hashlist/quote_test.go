package hashlist

import (
	"strings"
	"testing"
	"unicode"
)

// TestBadLineErrorsQuoteSafely: an error about a bad line quotes at most
// a short, escaped prefix of it, so a binary file read as a list (a .gz)
// or a huge line does not flood the terminal.
func TestBadLineErrorsQuoteSafely(t *testing.T) {
	gz := "\x1f\x8b\b\b\xf0\xd4\xe9j\x00\x03list\x00\x1d\xd2\xc9\x11\xc00\f\xc3\xc0?\xaa1\xe5\xbb\xff\xc6\x02\xe7\xcf\xc9\xb1P(:\x83\xc9bs\xb8\xa4\x91\x90\"\x9d\f2\xc9\"\x9b\x1cr\xa9F\x85*\xaaS\x83\x9a\xd4\xa26\x1b\x1b"
	long := strings.Repeat("ab", 5000)
	tests := []struct{ name, line string }{
		{"binary", gz},
		{"long hex", long},
		{"magnet btih binary", "magnet:?xt=urn:btih:" + strings.Repeat("\x01\xff", 200)},
		{"magnet btih long", "magnet:?xt=urn:btih:" + long},
		{"magnet btmh long", "magnet:?xt=urn:btmh:1220" + long},
		{"magnet unparsable", "magnet:?xt=urn:btih:%zz" + long + "\x7f"},
		{"json hash binary", `{"infoHash":"` + strings.Repeat(`\u0001`, 200) + `"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LineHashes(tt.line)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if len(msg) > 150 {
				t.Errorf("error of %d bytes: %s", len(msg), msg)
			}
			for _, r := range msg {
				if !unicode.IsPrint(r) || r == unicode.ReplacementChar {
					t.Fatalf("error holds %q: %q", r, msg)
				}
			}
		})
	}
}
