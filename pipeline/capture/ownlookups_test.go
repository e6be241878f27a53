package capture

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/dhtstate"
)

// TestFetchLookupsDropped: the writer leaves out the incoming queries of
// the fetch whose node ID is saved in the --dht-state directory, reading
// the file again when a fetch writes it during the run; every other
// observation is kept.
func TestFetchLookupsDropped(t *testing.T) {
	fetchA, fetchB, other := bytes.Repeat([]byte{0xaa}, 20), bytes.Repeat([]byte{0xbb}, 20), bytes.Repeat([]byte{0x11}, 20)
	fetchState := func(id []byte) string {
		return `{"kind": "` + dhtstate.FetchKind + `", "version": 1, "id": "` + hex.EncodeToString(id) + `", "nodes": []}`
	}
	obs := func(source string, id []byte) schema.Observation {
		return schema.Observation{InfoHash: [20]byte{1}, Source: source, NodeID: id}
	}
	// each of a run's batches: one get_peers from fetch A, one from B,
	// one from another node, an announce from A, a sample A's node gave
	// and a get_peers without a node ID.
	batch := func() []schema.Observation {
		return []schema.Observation{obs(schema.SourceGetPeers, fetchA), obs(schema.SourceGetPeers, fetchB),
			obs(schema.SourceGetPeers, other), obs(schema.SourceAnnouncePeer, fetchA),
			obs(schema.SourceSampleInfohashes, fetchA), obs(schema.SourceGetPeers, nil)}
	}
	const keep, remove = "", "-"
	for _, tt := range []struct {
		name  string
		noDir bool
		files []string // the file before each batch: content, keep as it is, or remove
		kept  []int    // observations kept of each batch
	}{
		{"no --dht-state", true, []string{keep}, []int{6}},
		{"no fetch state", false, []string{keep}, []int{6}},
		{"fetch A's", false, []string{fetchState(fetchA)}, []int{4}},
		{"written during the run", false, []string{keep, fetchState(fetchA), keep}, []int{6, 4, 4}},
		{"a new ID: both left out", false, []string{fetchState(fetchA), fetchState(fetchB)}, []int{4, 3}},
		{"removed: A still left out", false, []string{fetchState(fetchA), remove}, []int{4, 4}},
		{"corrupt", false, []string{`{"kind": "` + dhtstate.FetchKind + `", "id": "aaaa`}, []int{6}},
		{"not fetch's", false, []string{`{"kind": "other", "version": 1, "id": "` + hex.EncodeToString(fetchA) + `"}`}, []int{6}},
		{"bad id", false, []string{`{"kind": "` + dhtstate.FetchKind + `", "version": 1, "id": "aa"}`}, []int{6}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, dhtstate.FetchFile)
			f := newFetchIDs(dir)
			if tt.noDir {
				f = newFetchIDs("")
				if err := os.WriteFile(p, []byte(fetchState(fetchA)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for i, content := range tt.files {
				switch content {
				case keep:
				case remove:
					if err := os.Remove(p); err != nil {
						t.Fatal(err)
					}
				default: // as fetch writes it: a new file renamed over the old one
					if err := os.WriteFile(p+".tmp", []byte(content), 0o644); err != nil {
						t.Fatal(err)
					}
					if err := os.Rename(p+".tmp", p); err != nil {
						t.Fatal(err)
					}
				}
				b := batch()
				got, dropped := f.drop(b)
				if len(got) != tt.kept[i] || dropped != len(b)-tt.kept[i] {
					t.Errorf("batch %d: kept %d, dropped %d; want %d kept of %d", i, len(got), dropped, tt.kept[i], len(b))
				}
				for _, o := range got {
					if (o.Source == schema.SourceGetPeers || o.Source == schema.SourceAnnouncePeer) && tt.kept[i] < 6 &&
						bytes.Equal(o.NodeID, fetchA) {
						t.Errorf("batch %d: kept %s from fetch A's node", i, o.Source)
					}
				}
			}
		})
	}
}

// BenchmarkFetchLookupsDrop is the writer's cost per batch of
// Options.BatchSize get_peers observations, none from the fetch whose ID
// the directory holds: a stat of the file and a pass over the batch.
func BenchmarkFetchLookupsDrop(b *testing.B) {
	dir := b.TempDir()
	state := `{"kind": "` + dhtstate.FetchKind + `", "version": 1, "id": "` + hex.EncodeToString(bytes.Repeat([]byte{0xaa}, 20)) + `"}`
	if err := os.WriteFile(filepath.Join(dir, dhtstate.FetchFile), []byte(state), 0o644); err != nil {
		b.Fatal(err)
	}
	batch := make([]schema.Observation, DefaultOptions().BatchSize)
	for i := range batch {
		id := bytes.Repeat([]byte{0x11}, 20)
		id[0] = byte(i)
		batch[i] = schema.Observation{Source: schema.SourceGetPeers, NodeID: id}
	}
	f := newFetchIDs(dir)
	for b.Loop() {
		if _, n := f.drop(batch); n != 0 {
			b.Fatalf("dropped %d", n)
		}
	}
}
