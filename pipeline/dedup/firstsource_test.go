package dedup

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// TestFirstSource: first_source is the source of the observation at
// first_seen (the greater at a tie, whatever the inputs' order): a later
// run's earlier sighting (which moves first_seen) brings its own, a tie
// the greater, a later sighting none. An empty source is import.
func TestFirstSource(t *testing.T) {
	h := schema.Hash{0x42, 1, 2, 3}
	type sighting struct {
		src string
		at  time.Duration // after t0
	}
	const (
		get    = schema.SourceGetPeers
		sample = schema.SourceSampleInfohashes
		ann    = schema.SourceAnnouncePeer
	)
	for _, tt := range []struct {
		name      string
		runs      [][]sighting
		want      string
		wantFirst time.Duration
	}{
		{"sample_infohashes then get_peers", [][]sighting{{{sample, 0}}, {{get, 10 * time.Minute}}}, sample, 0},
		{"earliest of the run, read last", [][]sighting{{{get, 5 * time.Minute}, {ann, 9 * time.Minute}, {sample, time.Minute}}},
			sample, time.Minute},
		{"tie: the greater", [][]sighting{{{get, 0}, {sample, 0}, {ann, 0}}}, sample, 0},
		{"tie, other order", [][]sighting{{{sample, 0}, {ann, 0}, {get, 0}}}, sample, 0},
		{"a later run's earlier sighting", [][]sighting{{{get, 30 * time.Minute}}, {{sample, 0}}}, sample, 0},
		{"a later run's tie: the greater", [][]sighting{{{sample, 0}}, {{get, 0}, {ann, time.Minute}}}, sample, 0},
		{"a later run's tie, greater", [][]sighting{{{get, 0}}, {{sample, 0}}}, sample, 0},
		{"a later run's later sighting", [][]sighting{{{get, 0}}, {{sample, time.Minute}}}, get, 0},
		{"empty is import", [][]sighting{{{"", 0}}, {{get, time.Minute}}}, schema.SourceImport, 0},
		{"an input's own value", [][]sighting{{{"crawler-7", 0}, {get, time.Minute}}}, "crawler-7", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			data := filepath.Join(dir, "ds")
			for i, r := range tt.runs {
				var obs []schema.Observation
				for _, s := range r {
					obs = append(obs, schema.Observation{InfoHash: h, HashType: schema.HashV1,
						ObservedAt: t0.Add(s.at).UnixMilli(), Source: s.src, RunID: "t"})
				}
				if _, err := run(t, data, nil, writeObs(t, dir, obs)); err != nil {
					t.Fatalf("run %d: %v", i+1, err)
				}
			}
			got := readState(t, data)[h]
			if got.FirstSource != tt.want || got.FirstSeen != t0.Add(tt.wantFirst).UnixMilli() {
				t.Fatalf("first_source %q, first_seen %d; want %q, %d", got.FirstSource, got.FirstSeen, tt.want,
					t0.Add(tt.wantFirst).UnixMilli())
			}
		})
	}
}

// TestFirstSourceOfManySources: a batch with more distinct sources than
// an aggregate's byte holds (their ids kept aside) still gives each hash
// its own first source.
func TestFirstSourceOfManySources(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	var obs []schema.Observation
	want := map[schema.Hash]string{}
	for i := range 300 {
		h := schema.Hash{byte(i), byte(i >> 8), 7}
		src := fmt.Sprintf("source-%03d", i)
		want[h] = src
		obs = append(obs,
			schema.Observation{InfoHash: h, HashType: schema.HashV1, ObservedAt: t0.Add(time.Minute).UnixMilli(),
				Source: schema.SourceGetPeers, RunID: "t"},
			schema.Observation{InfoHash: h, HashType: schema.HashV1, ObservedAt: t0.UnixMilli(), Source: src, RunID: "t"})
	}
	if _, err := run(t, data, nil, writeObs(t, dir, obs)); err != nil {
		t.Fatal(err)
	}
	got := readState(t, data)
	for h, w := range want {
		if g := got[h]; g.FirstSource != w || g.LastSource != schema.SourceGetPeers {
			t.Errorf("%x: first_source %q last_source %q, want %q and %q", h, g.FirstSource, g.LastSource, w,
				schema.SourceGetPeers)
		}
	}
}
