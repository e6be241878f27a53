package rowio

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/infohash/infohash/formats/rowio/rowiotest"
)

// TestRequiredColumnWithNulls: a column the footer declares REQUIRED
// whose v2 page counts nulls holds fewer values than rows; that is a
// corrupt file, said as dedup's decoder says it, not rows whose values
// parquet-go shifted up and left empty at the end.
func TestRequiredColumnWithNulls(t *testing.T) {
	p := filepath.Join(t.TempDir(), "jobs.parquet")
	if err := os.WriteFile(p, rowiotest.RequiredWithNulls(t), 0o644); err != nil {
		t.Fatal(err)
	}
	type row struct {
		InfoHash []byte `parquet:"info_hash"`
	}
	err := readAllFile[row](p)
	want := p + `: corrupt Parquet: row group 0 column "info_hash": fewer values than rows: its pages hold 2 values for 3 rows`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
}
