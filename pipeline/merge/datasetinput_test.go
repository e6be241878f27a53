package merge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// TestDatasetAsResults: a dataset folder given as RESULTS ("merge --data
// B A" for "merge --data B --from A") is bad input (exit 2), nothing
// committed, with one line naming it and saying that --from unions a
// dataset. Read as a folder of results, it failed on whichever of its
// table files came first ("A/leases/v/…/part-….parquet: not a results
// file: missing required column outcome (is it leases? …)"). A folder
// of results inside a dataset (crawl-pass's DIR/work/PASS/) is still
// read as results.
func TestDatasetAsResults(t *testing.T) {
	h := hashAt(0x21, 1)
	tests := []struct {
		name   string
		inputs func(other, results string) []string
		bad    bool
	}{
		{"a dataset", func(other, _ string) []string { return []string{other} }, true},
		{"a dataset beside results", func(other, results string) []string { return []string{results, other + "/"} }, true},
		{"results in a folder of a dataset", func(other, results string) []string {
			dir := filepath.Join(other, "work", "p1")
			if err := os.MkdirAll(dir, 0o777); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(results, filepath.Join(dir, "results.parquet")); err != nil {
				t.Fatal(err)
			}
			return []string{dir}
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := makeDataset(t, []schema.State{newHash(h, t0)})
			other := makeDataset(t, []schema.State{newHash(hashAt(0x22, 1), t0)})
			results := writeResults(t, []schema.Result{{InfoHash: h, HashType: schema.HashV1, AttemptedAt: t0 + hour,
				Outcome: schema.OutcomeNoPeers}})
			before := datasettest.Snapshot(t, dir)
			_, err := tryMerge(dir, t0+2*hour, tt.inputs(other, results)...)
			if !tt.bad {
				if err != nil || stateOf(t, dir)[h].Attempts != 1 {
					t.Fatalf("merge = %v, attempts %d; want the result applied", err, stateOf(t, dir)[h].Attempts)
				}
				return
			}
			if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "--from") ||
				!strings.Contains(err.Error(), other) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("merge = %v (exit %d); want bad input naming %s and --from, on one line", err, exitcode.Of(err), other)
			}
			if datasettest.Snapshot(t, dir) != before {
				t.Fatal("a refused input committed")
			}
		})
	}
}
