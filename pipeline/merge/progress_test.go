package merge

import (
	"bytes"
	"context"
	"testing"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/progress/progresstest"
)

// TestMergeReportsProgress: merge reports the partitions it rewrites on
// Options.ProgressTo (here not a terminal: log lines, as dedup's and
// export's), and says nothing without it.
func TestMergeReportsProgress(t *testing.T) {
	logs := progresstest.Capture(t) // a line at every partition
	for _, tc := range []struct {
		name string
		to   *bytes.Buffer
		want []string
	}{
		{"progress", &bytes.Buffer{}, []string{`msg="merge: applying partitions"`, "total=3", "percent=100"}},
		{"none", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := makeDataset(t, []schema.State{newHash(hashAt(1, 1), t0), newHash(hashAt(2, 1), t0), newHash(hashAt(3, 1), t0)})
			var rs []schema.Result
			for _, j := range planJobs(t, dir, t0+hour, 10) {
				rs = append(rs, failure(j, schema.OutcomeNoPeers, t0+hour+minute))
			}
			if len(rs) != 3 {
				t.Fatalf("planned %d jobs, want 3", len(rs))
			}
			logs.Reset()
			o := DefaultOptions()
			o.Data, o.Now, o.Inputs = dir, tm(t0+2*hour), []string{writeResults(t, rs)}
			if tc.to != nil {
				o.ProgressTo = tc.to
			}
			if st, err := Run(context.Background(), o); err != nil || st.Applied != 3 {
				t.Fatalf("merge: %v, %+v", err, st)
			}
			progresstest.Check(t, logs.String(), "merge: applying", tc.want)
		})
	}
}
