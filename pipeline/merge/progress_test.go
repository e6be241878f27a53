package merge

import (
	"bytes"
	"context"
	"testing"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/progress/progresstest"
)

// TestMergeReportsProgress: merge reports the rows of results it reads
// and the partitions it rewrites on Options.ProgressTo (here not a
// terminal: log lines, as dedup's and export's), and says nothing without
// it.
func TestMergeReportsProgress(t *testing.T) {
	logs := progresstest.Capture(t) // a line at every step
	for _, tc := range []struct {
		name    string
		to      *bytes.Buffer
		reading []string
		apply   []string
	}{
		{"progress", &bytes.Buffer{}, []string{`msg="merge: reading results" done=3 `},
			[]string{`msg="merge: applying partitions"`, "total=3", "percent=100"}},
		{"none", nil, nil, nil},
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
			o.Data, o.Now, o.Inputs = dir, tm(t0+2*hour), []string{writeResults(t, rs[:1]), writeResults(t, rs[1:])}
			if tc.to != nil {
				o.ProgressTo = tc.to
			}
			if st, err := Run(context.Background(), o); err != nil || st.Applied != 3 {
				t.Fatalf("merge: %v, %+v", err, st)
			}
			progresstest.Check(t, logs.String(), "merge: reading", tc.reading)
			progresstest.Check(t, logs.String(), "merge: applying", tc.apply)
		})
	}
}

// TestMergeFromReportsProgress: merge --from reports the other dataset's
// partitions (state and torrents) it unions, to the last, and says
// nothing without ProgressTo.
func TestMergeFromReportsProgress(t *testing.T) {
	logs := progresstest.Capture(t)
	for _, tc := range []struct {
		name string
		to   *bytes.Buffer
		want []string
	}{
		{"progress", &bytes.Buffer{}, []string{`msg="merge --from: unioning partitions"`, "percent=100"}},
		{"none", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := makeDataset(t, []schema.State{newHash(hashAt(1, 1), t0)})
			other := makeDataset(t, []schema.State{newHash(hashAt(1, 2), t0), newHash(hashAt(2, 1), t0), newHash(hashAt(3, 1), t0)})
			logs.Reset()
			o := DefaultOptions()
			o.Data, o.Now, o.From = dir, tm(t0+hour), other
			if tc.to != nil {
				o.ProgressTo = tc.to
			}
			if st, err := Run(context.Background(), o); err != nil || !st.Committed || st.Union.Partitions != 3 {
				t.Fatalf("merge --from: %v, %+v", err, st)
			}
			progresstest.Check(t, logs.String(), "merge --from: unioning", tc.want)
		})
	}
}
