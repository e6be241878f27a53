package dedup

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
)

// TestNewDatasetAnotherWriterFilled: a dedup that creates the dataset
// and is overtaken by another dedup of the same input (which commits
// snapshot 1 while the first works) applies nothing and does not say it
// created an empty dataset: the dataset holds the other writer's
// snapshot. It said "created a new, empty dataset" all the same.
func TestNewDatasetAnotherWriterFilled(t *testing.T) {
	tests := []struct {
		name     string
		compete  bool
		say, not string
		commits  int
	}{
		{"alone", false, "dedup: created a new dataset", "empty dataset", 1},
		{"overtaken by a dedup of the same input", true, "re-applying on the new snapshot", "created a new", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			data := filepath.Join(dir, "ds")
			obs := genObs(3, 200, 50)
			in := writeObs(t, dir, obs)
			distinct := map[[20]byte]bool{}
			for _, o := range obs {
				distinct[o.InfoHash] = true
			}
			var log bytes.Buffer
			defer slog.SetDefault(slog.Default())
			slog.SetDefault(slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelInfo})))
			tries := 0
			st, err := run(t, data, func(o *Options) {
				o.BindPolicy = func(_ *Options, _ *dataset.Tx) error { // as each try begins
					if tries++; tt.compete && tries == 1 {
						other, err := run(t, data, nil, in)
						if err != nil || other.Commits != 1 {
							t.Fatalf("the other dedup: %d commits, %v", other.Commits, err)
						}
					}
					return nil
				}
			}, in)
			if err != nil || st.Commits != tt.commits || st.Snapshot != 1 || len(readState(t, data)) != len(distinct) {
				t.Fatalf("dedup = %d commits at snapshot %d, %v; want %d at 1, %d hashes", st.Commits, st.Snapshot, err, tt.commits, len(distinct))
			}
			if out := log.String(); !strings.Contains(out, tt.say) || strings.Contains(out, tt.not) {
				t.Fatalf("log %q: want %q, and no %q", out, tt.say, tt.not)
			}
		})
	}
}
