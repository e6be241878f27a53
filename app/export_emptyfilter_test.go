package app

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestExportEmptyFilterRefused: a filter flag given an empty value (a
// cron line's --since "$LAST" with LAST unset) is a usage error, exit 2,
// one line, nothing written. Each was taken as left out: the export
// exited 0 with the whole table, as the other filters' empty values
// (--status "", --prefix "") are not.
func TestExportEmptyFilterRefused(t *testing.T) {
	dir, data := seedDataset(t)
	tests := map[string]struct {
		flag, value, want string
	}{
		"since":         {"--since", "", "infohash: export: --since: empty; give a TIME (RFC 3339, or a duration such as 24h or 7d), or leave the flag out\n"},
		"blank since":   {"--since", " ", "infohash: export: --since: empty; give a TIME (RFC 3339, or a duration such as 24h or 7d), or leave the flag out\n"},
		"fetched-since": {"--fetched-since", "", "infohash: export: --fetched-since: empty; give a TIME (RFC 3339, or a duration such as 24h or 7d), or leave the flag out\n"},
		"blocklist":     {"--blocklist", "", "infohash: export: --blocklist: empty; give a FILE of hashes, or leave the flag out\n"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(dir, "out.csv")
			stdout, stderr, code := runMain(t, "export", "--data", data, "--table", "catalog", "-f", "csv", "-o", out, tc.flag, tc.value)
			if code != 2 || stderr != tc.want || stdout != "" {
				t.Fatalf("exit %d, stderr %q, stdout %q; want 2 and %q", code, stderr, stdout, tc.want)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("%s was written (%v)", out, err)
			}
		})
	}
}
