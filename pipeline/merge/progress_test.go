package merge

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/progress/progresstest"
)

// TestMergeReportsProgress: merge reports the rows of results it reads
// and the partitions it rewrites on Options.ProgressTo (here not a
// terminal: log lines, as dedup's and export's), and says nothing without
// it. Reading Parquet files (their footers count their rows) has a total
// and a percent, reading an Arrow stream has not; reading ends on its
// final count (finished=true), and each step between reading and
// applying says what it does, in that order.
func TestMergeReportsProgress(t *testing.T) {
	logs := progresstest.Capture(t) // a line at every step
	steps := []string{"merge: reading results", "merge: reading the peers table", "merge: penalizing peers",
		"merge: reading the leases table", "merge: applying partitions", // each partition's results sorted there
		"merge: staging the leases and peers tables"}
	for _, tc := range []struct {
		name    string
		to      *bytes.Buffer
		arrow   bool // the second input is an Arrow stream, not a Parquet file
		reading []string
		apply   []string
	}{
		{"progress", &bytes.Buffer{}, false, []string{`msg="merge: reading results" done=3 `, "total=3 percent=100 finished=true"},
			[]string{`msg="merge: applying partitions"`, "total=3", "percent=100"}},
		{"arrow input", &bytes.Buffer{}, true, []string{`msg="merge: reading results" done=3 elapsed=0s finished=true`},
			[]string{`msg="merge: applying partitions"`, "total=3", "percent=100"}},
		{"none", nil, false, nil, nil},
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
			second := writeResults(t, rs[1:])
			if tc.arrow {
				second = writeArrowResults(t, rs[1:])
			}
			logs.Reset()
			o := DefaultOptions()
			o.Data, o.Now, o.Inputs = dir, tm(t0+2*hour), []string{writeResults(t, rs[:1]), second}
			if tc.to != nil {
				o.ProgressTo = tc.to
			}
			if st, err := Run(context.Background(), o); err != nil || st.Applied != 3 {
				t.Fatalf("merge: %v, %+v", err, st)
			}
			progresstest.Check(t, logs.String(), "merge: reading", tc.reading)
			progresstest.Check(t, logs.String(), "merge: applying", tc.apply)
			if tc.to == nil {
				progresstest.Check(t, logs.String(), "merge: reading the leases", nil)
				return
			}
			// Each step ends on a finished line before the next one
			// says anything.
			at := 0
			for _, step := range steps {
				msg := `msg="` + step + `"`
				first, last := strings.Index(logs.String(), msg), strings.LastIndex(logs.String(), msg)
				if first < at || !strings.HasSuffix(strings.SplitN(logs.String()[last:], "\n", 2)[0], "finished=true") {
					t.Fatalf("step %q not logged after the one before it, or not to its end:\n%s", step, logs.String())
				}
				at = last
			}
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
