package merge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// capturedObservations is what capture writes in a short run: many
// observations of few hashes (1317 of 42), whose repeated hashes and
// run_id compress to a few bytes a row.
func capturedObservations() []schema.Observation {
	obs := make([]schema.Observation, 1317)
	for i := range obs {
		obs[i] = schema.Observation{InfoHash: hashAt(0x51, uint64(i%42)), HashType: schema.HashV1,
			ObservedAt: t0 + int64(i), Source: schema.SourceGetPeers, NodeAddr: "127.0.0.1:6881", RunID: "run-1"}
	}
	return obs
}

// writeRows writes rows as Parquet, or as an Arrow IPC stream when the
// name ends in .arrow.
func writeRows[T any](t *testing.T, name string, rows []T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	var w *rowio.Writer[T]
	if strings.HasSuffix(name, ".arrow") {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		w = rowio.NewArrowWriter[T](name, f)
	} else {
		var err error
		if w, err = rowio.Create[T](path, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestMergeRefusesOtherKinds: a file of another stage given to merge is
// bad input (exit 2) saying in one line that it is not a results file,
// what it looks like, and what merge takes, whatever its size: capture's
// small, well-compressed output used to fail a rows-per-byte guess first
// ("declares 1317 rows in 6661 bytes").
func TestMergeRefusesOtherKinds(t *testing.T) {
	jobs := []schema.Job{{InfoHash: hashAt(0x52, 1), HashType: schema.HashV1, Attempt: 1, Reason: "new",
		LeaseID: "l", LeaseUntil: t0 + hour}}
	for _, tt := range []struct {
		name, path, want string
	}{
		{"capture's observations", writeRows(t, "obs.parquet", capturedObservations()),
			"not a results file: missing required column outcome (is it observations? merge takes fetch's results)"},
		{"observations as Arrow", writeRows(t, "obs.arrow", capturedObservations()),
			"not a results file: missing required column outcome (is it observations? merge takes fetch's results)"},
		{"jobs", writeRows(t, "jobs.parquet", jobs),
			"not a results file: missing required column outcome (is it jobs? merge takes fetch's results)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := makeDataset(t, []schema.State{newHash(hashAt(0x51, 1), t0)})
			_, err := tryMerge(dir, t0+minute, tt.path)
			if err == nil {
				t.Fatal("merged")
			}
			want := "merge: " + tt.path + ": " + tt.want
			if got := err.Error(); got != want || exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("got %q (exit %d)\nwant %q (exit 2)", got, exitcode.Of(err), want)
			}
		})
	}
}

// TestMergeReadsSmallResultsFiles: results that compress to a few bytes
// a row (many attempts at few hashes, as a run over a jobs file listing
// hashes many times wrote) are results, not an implausible file.
func TestMergeReadsSmallResultsFiles(t *testing.T) {
	rs := make([]schema.Result, 1317)
	for i := range rs {
		rs[i] = schema.Result{InfoHash: hashAt(0x53, uint64(i%42)), HashType: schema.HashV1,
			AttemptedAt: t0 + int64(i/42), Outcome: schema.OutcomeNoPeers}
	}
	path := writeResults(t, rs)
	if st, _ := os.Stat(path); st.Size()/int64(len(rs)) >= 10 {
		t.Fatalf("%d bytes for %d results: not the small file this test is about", st.Size(), len(rs))
	}
	got, _, err := readResults(input{name: path, path: path}, nil)
	if err != nil || len(got) != len(rs) {
		t.Fatalf("read %d results, err %v", len(got), err)
	}
}
