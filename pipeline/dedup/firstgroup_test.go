package dedup

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/export"
)

// TestFirstSourceWhateverTheGrouping: the same observations give
// byte-identical state whether applied in one commit or in one commit per
// input (BatchHashes 1), newest input first or oldest first: a later
// commit's earlier sighting moves first_seen and first_source with it,
// and sightings at the same first time keep the greater source. The
// sightings lie whole half-lives apart, so that activity (sums of powers
// of two) is exact in any order and the comparison is about first_source.
func TestFirstSourceWhateverTheGrouping(t *testing.T) {
	const (
		get    = schema.SourceGetPeers
		sample = schema.SourceSampleInfohashes
		ann    = schema.SourceAnnouncePeer
	)
	day := 24 * time.Hour // the default policy's activity half-life
	hs := []schema.Hash{{0x10, 1}, {0x10, 2}, {0x80, 3}, {0xf0, 4}}
	wantFirst := []string{sample, get, sample, "crawler-7"}
	type sighting struct {
		h, day int
		src    string
	}
	inputs := [][]sighting{ // the newest first
		{{0, 4, get}, {1, 3, sample}, {2, 2, get}, {3, 3, get}},
		{{0, 3, ann}, {1, 2, ann}, {2, 2, ann}, {3, 1, "crawler-7"}},
		{{0, 1, ann}, {1, 1, get}, {2, 2, sample}},
		{{0, 1, sample}, {0, 2, get}, {1, 5, get}, {2, 3, get}},
	}
	dir := t.TempDir()
	var files []string
	for _, in := range inputs {
		var obs []schema.Observation
		for _, s := range in {
			obs = append(obs, schema.Observation{InfoHash: hs[s.h], HashType: schema.HashV1,
				ObservedAt: t0.Add(time.Duration(s.day) * day).UnixMilli(), Source: s.src, RunID: "t"})
		}
		files = append(files, writeObs(t, dir, obs))
	}
	reversed := slices.Clone(files)
	slices.Reverse(reversed)
	var oneCommit []byte
	for _, tt := range []struct {
		name    string
		batch   int64
		files   []string
		commits int
	}{
		{"one commit", 0, files, 1},
		{"a commit per input, newest first", 1, files, len(files)},
		{"a commit per input, oldest first", 1, reversed, len(files)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ds")
			st, err := run(t, data, func(o *Options) { o.BatchHashes, o.Now = tt.batch, t0.Add(10*day) }, tt.files...)
			if err != nil {
				t.Fatal(err)
			}
			if st.Commits != tt.commits {
				t.Fatalf("%d commits, want %d", st.Commits, tt.commits)
			}
			state := readState(t, data)
			for i, h := range hs {
				if g := state[h]; g.FirstSource != wantFirst[i] {
					t.Errorf("%x: first_source %q (first_seen %s), want %q", h, g.FirstSource,
						time.UnixMilli(g.FirstSeen).UTC().Format(time.DateOnly), wantFirst[i])
				}
			}
			got := exportState(t, data)
			if oneCommit == nil {
				oneCommit = got
			} else if !bytes.Equal(got, oneCommit) {
				t.Fatalf("the state differs from one commit's:\n%s\none commit's:\n%s", got, oneCommit)
			}
		})
	}
}

// exportState is the state table as export writes it in JSON Lines, its
// lines sorted (export writes a partition's files one after the other,
// and a commit per input leaves several).
func exportState(t *testing.T, data string) []byte {
	t.Helper()
	var out bytes.Buffer
	o := export.DefaultOptions()
	o.Data, o.Table, o.Format, o.Stdout = data, "state", "jsonl", &out
	if _, err := export.Run(context.Background(), o); err != nil {
		t.Fatalf("export: %v", err)
	}
	lines := bytes.SplitAfter(out.Bytes(), []byte("\n"))
	slices.SortFunc(lines, bytes.Compare)
	return bytes.Join(lines, nil)
}
