package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/rowio/rowiotest"
)

// TestRequiredColumnWithNullsSaidAlike: a Parquet input whose REQUIRED
// info_hash column holds nulls is refused (exit 2) by dedup and by fetch
// with one message naming the file: fewer values than rows, in v2 data
// pages (nulls counted in the header) and v1 ones (nulls in the levels
// leading the data). fetch said "row 2: info_hash has 0 bytes" (parquet-go
// shifts the values up); with v1 pages both said parquet-go's decoding
// error ("DELTA_LENGTH_BYTE_ARRAY: invalid number of mini block (0)").
func TestRequiredColumnWithNullsSaidAlike(t *testing.T) {
	for _, pages := range []int{1, 2} {
		dir := t.TempDir()
		in := filepath.Join(dir, "in.parquet")
		if err := os.WriteFile(in, rowiotest.RequiredWithNullsPages(t, pages), 0o644); err != nil {
			t.Fatal(err)
		}
		want := in + `: corrupt Parquet: row group 0 column "info_hash": fewer values than rows: its pages hold 2 values for 3 rows`
		for _, tt := range []struct {
			name string
			args []string
		}{
			{"dedup", []string{"dedup", "--data", filepath.Join(dir, "ds"), "--now", "2026-03-01T00:00:00Z", in}},
			{"fetch", []string{"fetch", in, "-o", filepath.Join(dir, "results.parquet"), "--no-dht", "--bootstrap", ""}},
		} {
			t.Run(fmt.Sprintf("%s/v%d", tt.name, pages), func(t *testing.T) {
				_, stderr, code := runMain(t, tt.args...)
				if code != 2 || !strings.Contains(stderr, tt.name+": "+want+"\n") {
					t.Fatalf("exit %d, stderr:\n%s\nwant exit 2 and %q", code, stderr, want)
				}
			})
		}
	}
}
