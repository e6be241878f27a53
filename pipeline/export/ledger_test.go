package export

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/infohash/infohash/pipeline/dedup"
)

// TestLedgerInApplicationOrder: the ledger's applied_at is each run's
// clock (--now), so when a later run's clock is earlier, ordering by it
// is not the order the inputs were applied in; export --table ledger
// writes the entries in that order all the same (README says to use it
// for application order), across the ledger's files.
func TestLedgerInApplicationOrder(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	day := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	// Clocks that go back and forth: 3 days, 1, 2, 0, 4 after day.
	offsets := []int{3, 1, 2, 0, 4}
	var want []string
	for i, off := range offsets {
		name := fmt.Sprintf("input-%d.txt", i)
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(fmt.Sprintf("%040x\n", i+1)), 0o644); err != nil {
			t.Fatal(err)
		}
		o := dedup.DefaultOptions()
		o.Data, o.Inputs, o.Now = data, []string{p}, day.AddDate(0, 0, off)
		if _, err := dedup.Run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		want = append(want, name)
	}
	recs, err := csv.NewReader(bytes.NewReader(export(t, data, "ledger", "csv", nil))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	name, at := slices.Index(recs[0], "name"), slices.Index(recs[0], "applied_at")
	var got, times []string
	for _, r := range recs[1:] {
		got = append(got, filepath.Base(r[name]))
		times = append(times, r[at])
	}
	if !slices.Equal(got, want) {
		t.Fatalf("ledger export lists %v, want the order applied, %v", got, want)
	}
	if slices.IsSorted(times) {
		t.Fatalf("applied_at %v is in order: the test proves nothing", times)
	}
}
