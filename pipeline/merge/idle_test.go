package merge

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// TestMergeNoResultsCommitsNothing: results that hold no row (the output
// of a fetch given no job, an idle crawl pass's) change nothing: no
// snapshot is committed (each would push a reader's out of the --keep
// window), applied again they still change nothing, and stdin spooled
// into the inbox leaves it.
func TestMergeNoResultsCommitsNothing(t *testing.T) {
	var stream bytes.Buffer // an Arrow stream of results with no batch
	w := rowio.NewArrowWriter[schema.Result]("stdout", &stream)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, input string }{
		{"parquet file", "results.parquet"},
		{"arrow file", "results.arrows"},
		{"stdin", "-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := makeDataset(t, []schema.State{newHash(hashAt(1, 1), 1)})
			input := tc.input
			switch filepath.Ext(input) {
			case ".parquet":
				input = writeResults(t, nil)
			case ".arrows":
				input = filepath.Join(t.TempDir(), input)
				if err := os.WriteFile(input, stream.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			current := func() string {
				b, err := os.ReadFile(filepath.Join(dir, "CURRENT"))
				if err != nil {
					t.Fatal(err)
				}
				return string(b)
			}
			before := current()
			for range 2 {
				o := DefaultOptions()
				o.Data, o.Now, o.Inputs = dir, tm(1_000_000), []string{input}
				o.Stdin = bytes.NewReader(stream.Bytes())
				st, err := Run(context.Background(), o)
				if err != nil {
					t.Fatal(err)
				}
				if st.Committed || st.Results != 0 {
					t.Errorf("stats %+v: want no results and no commit", st)
				}
				if got := current(); got != before {
					t.Fatalf("CURRENT %q, was %q: an empty input committed a snapshot", got, before)
				}
			}
			left, _ := filepath.Glob(filepath.Join(dir, "inbox", "merge", "*"))
			if len(left) > 0 {
				t.Errorf("left in the inbox: %v", left)
			}
		})
	}
}
