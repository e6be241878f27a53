package infodict

import (
	"strings"
	"testing"

	"github.com/anacrolix/torrent/bencode"
)

func TestScanBencode(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		depth int
		want  int // -1: error
	}{
		{"int", "i42e", 0, 4},
		{"negative int", "i-7e", 0, 4},
		{"zero", "i0e", 0, 3},
		{"negative zero", "i-0e", 0, -1},
		{"leading zero", "i03e", 0, -1},
		{"empty int", "ie", 0, -1},
		{"int overflow", "i9223372036854775808e", 0, -1},
		{"max int", "i9223372036854775807e", 0, 21},
		{"string", "3:abcXYZ", 0, 5},
		{"empty string", "0:", 0, 2},
		{"string past end", "5:abc", 0, -1},
		{"huge string length", "99999999999:a", 0, -1},
		{"string length leading zero", "03:abc", 0, -1},
		{"list", "li1e3:abce", 0, 10},
		{"empty list", "le", 0, 2},
		{"dict", "d1:ai1e1:bli2eee", 0, 16},
		{"empty dict", "de", 0, 2},
		{"dict int key", "di1ei2ee", 0, -1},
		{"dict key without value", "d1:ae", 0, -1},
		{"dict list key", "dle1:ae", 0, -1},
		{"nested dict as value then key", "d1:ad1:bi1ee1:ci2ee", 0, 19},
		{"trailing bytes ignored", "i1eXYZ", 0, 3},
		{"stray e", "e", 0, -1},
		{"truncated list", "li1e", 0, -1},
		{"bad byte", "x", 0, -1},
		{"empty", "", 0, -1},
		{"depth ok", strings.Repeat("l", 4) + strings.Repeat("e", 4), 4, 8},
		{"too deep", strings.Repeat("l", 5) + strings.Repeat("e", 5), 4, -1},
		{"too deep default", strings.Repeat("l", 100) + strings.Repeat("e", 100), 0, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := Scan([]byte(tt.in), tt.depth)
			if tt.want < 0 {
				if err == nil {
					t.Fatalf("Scan(%q) = %d, want an error", tt.in, n)
				}
				return
			}
			if err != nil || n != tt.want {
				t.Fatalf("Scan(%q) = %d, %v; want %d", tt.in, n, err, tt.want)
			}
		})
	}
}

// FuzzScanBencode checks the scanner never panics and agrees with the
// anacrolix decoder: whatever it accepts, the decoder decodes (unless keys
// are out of order).
func FuzzScanBencode(f *testing.F) {
	for _, s := range []string{"i42e", "3:abc", "d1:ai1e1:bli2eee", "le", "d1:md11:ut_metadatai1eee", "lllleeee", "i-0e"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := Scan(b, 16)
		if err != nil {
			return
		}
		if n <= 0 || n > len(b) {
			t.Fatalf("length %d out of range for %d bytes", n, len(b))
		}
		// The scanner checks structure, not canonical key order, which the
		// decoder enforces for generic values.
		var v any
		if err := bencode.Unmarshal(b[:n], &v); err != nil && !strings.Contains(err.Error(), "dict keys unsorted") {
			t.Fatalf("scanner accepted %q but the decoder says %v", b[:n], err)
		}
	})
}
