package fetch

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// TestRunRepeatedHashes: a hash listed more than once is attempted once;
// the repeats are counted as duplicates, not as jobs. An observations
// file given as jobs (capture's output: 1317 rows of 42 hashes) makes 42
// attempts, not 1317.
func TestRunRepeatedHashes(t *testing.T) {
	const rows, distinct = 1317, 42
	hash := func(i int) schema.Hash { return schema.Hash{0x61, byte(i % distinct)} }
	obs := make([]schema.Observation, rows)
	var list strings.Builder
	for i := range obs {
		obs[i] = schema.Observation{InfoHash: hash(i), HashType: schema.HashV1, ObservedAt: int64(i + 1),
			Source: schema.SourceGetPeers, RunID: "r"}
		h := hash(i)
		list.WriteString(hex.EncodeToString(h[:]) + "\n")
	}
	for _, tt := range []struct {
		name  string
		input func(t *testing.T, o *Options)
	}{
		{"observations Parquet", func(t *testing.T, o *Options) {
			o.Input = filepath.Join(t.TempDir(), "obs.parquet")
			writeRows(t, o.Input, obs)
		}},
		{"Arrow stream", func(t *testing.T, o *Options) {
			var b bytes.Buffer
			w := rowio.NewArrowWriter[schema.Observation]("stdin", &b)
			for i := 0; i < rows; i += 100 { // several batches
				if err := w.Write(obs[i:min(i+100, rows)]); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			o.Input, o.Stdin = "-", &b
		}},
		{"hash list file", func(t *testing.T, o *Options) {
			o.Input = filepath.Join(t.TempDir(), "hashes.txt")
			if err := os.WriteFile(o.Input, []byte(list.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := testOptions()
			o.Output = filepath.Join(t.TempDir(), "r.parquet")
			tt.input(t, &o)
			st, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if st.Jobs != distinct || st.Attempted != distinct || st.Duplicates != rows-distinct {
				t.Fatalf("jobs %d attempted %d duplicates %d, want %d, %d, %d",
					st.Jobs, st.Attempted, st.Duplicates, distinct, distinct, rows-distinct)
			}
			if got := readResults(t, o.Output); len(got) != distinct { // fails on a repeated hash
				t.Fatalf("%d results, want %d", len(got), distinct)
			}
			var b strings.Builder
			st.WriteText(&b)
			if !strings.HasPrefix(b.String(), "fetch: 42 jobs (1275 repeated rows skipped), 42 attempted,") {
				t.Fatalf("summary %q", b.String())
			}
		})
	}
}
