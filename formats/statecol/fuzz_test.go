package statecol_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/statecol"
)

// FuzzReadStateFile: a damaged state file (bit rot, a truncated copy, a
// foreign dataset given to merge) must read as an error, never a panic,
// and never as more rows than its footer says. Splice over it must do the
// same.
func FuzzReadStateFile(f *testing.F) {
	rowio.FailOnOwnPanics(f) // a panic of our own code is a bug, not bad input
	var good bytes.Buffer
	if err := statecol.WriteState(&good, sample(300)); err != nil {
		f.Fatal(err)
	}
	f.Add(good.Bytes())
	for _, at := range []int{4, 100, good.Len() / 2, good.Len() - 40, good.Len() - 9} {
		b := bytes.Clone(good.Bytes())
		b[at] ^= 0x41
		f.Add(b)
	}
	f.Add(good.Bytes()[:good.Len()/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "state.parquet")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		rows, err := statecol.ReadUntrustedStateFile(p, 0)
		if err == nil {
			src, err := statecol.OpenUntrusted(p, 0)
			if err != nil {
				t.Fatalf("read %d rows, then Open failed: %v", len(rows), err)
			}
			defer src.Close()
			if int64(len(rows)) != src.NumRows() {
				t.Fatalf("read %d rows of a file of %d", len(rows), src.NumRows())
			}
			// The optional columns in need take the selection's
			// level-counting path (picks) on every page.
			need := statecol.ColumnsNamed("last_seen", "seen_count", "next_retry", "last_attempt", "last_failure",
				"info_hash_v2", "tier")
			_ = statecol.Splice(io.Discard, src, need,
				func(first, n int64) []int32 {
					if n > 1 {
						return []int32{0, int32(n / 2), int32(n - 1)}
					}
					return []int32{0}
				},
				func(first int64, sel []int32, st []schema.State) (statecol.Columns, error) {
					st[0].SeenCount++
					return statecol.ColumnsNamed("seen_count"), nil
				})
		}
	})
}
