package dedup

import (
	"strings"
	"testing"

	"github.com/infohash/infohash/internal/exitcode"
)

// TestTextNamedAsBinaryFormat: a file named .parquet, .arrows or .arrow
// that starts with text is bad input saying which format it lacks, not a
// hash list whose lines each fail as a hash; other names holding text
// are hash lists.
func TestTextNamedAsBinaryFormat(t *testing.T) {
	head := []byte("garbage-")
	for _, tt := range []struct {
		path string
		want string // "" for a hash list
	}{
		{"work/1/observations.arrows", "not an Arrow IPC stream"},
		{"in/x.ARROW", "not an Arrow IPC stream"},
		{"in/x.parquet", "not a Parquet file"},
		{"in/hashes.txt", ""},
		{"in/hashes", ""},
		{"", ""}, // a stream
	} {
		t.Run(tt.path, func(t *testing.T) {
			k, err := kindOf(head, tt.path, tt.path, "ds")
			if tt.want == "" {
				if err != nil || k != kindText {
					t.Fatalf("got %v, %v; want a text hash list", k, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.path) ||
				exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("got %v (exit %d), want a bad-input error naming %s: %s", err, exitcode.Of(err), tt.path, tt.want)
			}
		})
	}
}
