package statecol

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// Kept columns are decoded once: a second pass over them reads nothing
// (it works with the file closed) and sees the same values; columns not
// kept (strings) still read the file.
func TestKeptPagesServeSecondRead(t *testing.T) {
	defer func(n int) { rowGroupRows = n }(rowGroupRows)
	rowGroupRows = 1000
	rows := randomStates(2500, 3, false)
	f, _ := openStateFile(t, rows)
	defer f.Close()
	rg := f.RowGroups()[1]
	f.keepPages(ColumnsNamed("seen_count", "activity", "last_source"), 1, rg)
	read := func(col string) ([]int64, error) {
		c, _ := f.Column(rg, col)
		var got []int64
		err := EachPage(c, func(p parquet.Page) error {
			switch col {
			case "seen_count":
				got = append(got, values(p).Int64()...)
			case "activity":
				got = append(got, int64(len(values(p).Double())))
			default:
				got = append(got, p.NumValues())
			}
			return nil
		})
		return got, err
	}
	first, err := read("seen_count")
	if err != nil || len(first) != 1000 || first[0] != rows[1000].SeenCount || first[999] != rows[1999].SeenCount {
		t.Fatalf("first pass: %d values, %v", len(first), err)
	}
	if _, err := read("last_source"); err != nil {
		t.Fatal(err)
	}
	f.f.Close() // from here on, only kept pages can be read
	second, err := read("seen_count")
	if err != nil || !equalInts(first, second) {
		t.Fatalf("second pass of a kept column: %d values, %v", len(second), err)
	}
	if _, err := read("last_source"); err == nil {
		t.Fatal("a string column was kept (its dictionary goes with its page reader)")
	}
	if _, err := read("activity"); err == nil {
		t.Fatal("a kept column never read whole served pages it does not have")
	}
	f.releasePages()
	if f.keep != nil {
		t.Fatal("releasePages left the keep")
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// openStateFile writes rows as a state file and opens it; it returns
// the file and its path.
func openStateFile(t testing.TB, rows []schema.State) (*File, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.parquet")
	var buf bytes.Buffer
	if err := WriteState(&buf, rows); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(rowio.UnrecordedFile(p))
	if err != nil {
		t.Fatal(err)
	}
	return f, p
}
