package hashlist

import (
	"strings"
	"testing"
)

// TestCSVHeaderError: a list's first line that is a CSV header (export
// --format csv's, of any table) is an error saying so and what the
// command reads, not "want 40 or 64 hex characters, got 261"; another
// bad first line, or a header-like later line, is left to the caller's
// error (nil).
func TestCSVHeaderError(t *testing.T) {
	for _, tt := range []struct {
		name, list string
		line       int // the line the error is asked for
		want       string
	}{
		{"state", "info_hash,info_hash_v2,hash_type,first_seen\n", 1,
			`x.csv:1: "info_hash,info_hash_v2,hash_type,first_seen" looks like a CSV header: dedup reads Parquet, Arrow, or ` +
				"a list of one infohash or magnet URI a line (export --format csv output is not an input)"},
		{"quoted", "\"info_hash\",\"seen_count\"\n", 1, "looks like a CSV header"},
		{"with a BOM", "\ufeffinfo_hash,seen_count\n", 1, "looks like a CSV header"},
		{"peers", "addr,class,until,failures,last_at\n", 1, "looks like a CSV header"},
		{"ledger", "id,name,rows,applied_at\n", 1, "looks like a CSV header"},
		{"no comma", "info_hash\n", 1, ""},
		{"commas, no column", "a,b,c\n", 1, ""},
		{"a hash", "zz23456789abcdef0123456789abcdef01234567\n", 1, ""},
		{"header on line 2", "0123456789abcdef0123456789abcdef01234567\ninfo_hash,seen_count\n", 2, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := NewScanner("x.csv", strings.NewReader(tt.list))
			for i := 0; i < tt.line; i++ {
				if !s.Scan() {
					t.Fatalf("no line %d", i+1)
				}
			}
			err := s.CSVHeaderError("dedup reads Parquet, Arrow, or")
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("got %v, want none", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}
