package app

import (
	"crypto/sha256"
	"path/filepath"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/tools/badpeers"
)

// TestWrongHashTypeCorrectedByFetch: a v1 hash that one input labelled v2
// (dedup: v2 wins) is fetched from an honest peer all the same, and the
// metadata sets its hash_type back to v1 in the state, the torrents and
// the catalog; a v2 hash labelled v1 is fetched and gets its full v2 hash.
// The v1 case used to end hash_mismatch, penalising the peer, for ever.
func TestWrongHashTypeCorrectedByFetch(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ih")
	v1 := badpeers.NewTorrent(31, 2, 10)
	sum := sha256.Sum256(badpeers.NewHybridTorrent(32, 2, 10).Info)
	v2 := badpeers.Torrent{Info: badpeers.NewHybridTorrent(32, 2, 10).Info}
	copy(v2.InfoHash[:], sum[:20])
	peer := fetchPeer(t, badpeers.Good, v1, v2)

	at := time.Now().Add(-time.Hour).UnixMilli() // plan leases from the wall clock, as fetch checks them
	obs := filepath.Join(dir, "obs.parquet")
	writeRows(t, obs, []schema.Observation{
		{InfoHash: v1.InfoHash, HashType: schema.HashV1, ObservedAt: at, Source: schema.SourceImport, RunID: "a"},
		{InfoHash: v1.InfoHash, HashType: schema.HashV2, ObservedAt: at + 1, Source: schema.SourceImport, RunID: "b"},
		{InfoHash: v2.InfoHash, HashType: schema.HashV1, ObservedAt: at, Source: schema.SourceImport, RunID: "a"},
	})
	mustRun(t, nil, "dedup", "--data", data, obs)
	jobs := filepath.Join(dir, "jobs.parquet")
	mustRun(t, nil, "plan-retries", "--data", data, "-o", jobs)
	res := filepath.Join(dir, "results.parquet")
	mustRun(t, nil, "fetch", jobs, "--no-dht", "--peer", peer.Addr(), "-o", res)
	mustRun(t, nil, "merge", "--data", data, res)

	want := map[schema.Hash]struct {
		typ int8
		v2  []byte
	}{v1.InfoHash: {schema.HashV1, nil}, v2.InfoHash: {schema.HashV2, sum[:]}}
	cat := filepath.Join(dir, "catalog.parquet")
	mustRun(t, nil, "export", "--data", data, "--table", "catalog", "-o", cat)
	rows := readParquet[schema.Catalog](t, cat)
	if len(rows) != 2 {
		t.Fatalf("%d catalog rows, want 2", len(rows))
	}
	for _, c := range rows {
		w := want[c.InfoHash]
		if c.MetadataStatus != schema.StatusFetched || c.HashType != w.typ || string(c.InfoHashV2) != string(w.v2) || c.Attempts != 1 {
			t.Errorf("%x: %s after %d attempts (%s), hash_type %d, info_hash_v2 %x; want fetched after 1, hash_type %d, %x",
				c.InfoHash[:4], c.MetadataStatus, c.Attempts, c.LastFailure, c.HashType, c.InfoHashV2, w.typ, w.v2)
		}
	}
	tor := filepath.Join(dir, "torrents.parquet")
	mustRun(t, nil, "export", "--data", data, "--table", "torrents", "-o", tor)
	for _, tr := range readParquet[schema.Torrent](t, tor) {
		if tr.HashType != want[tr.InfoHash].typ {
			t.Errorf("torrent %x: hash_type %d, want %d", tr.InfoHash[:4], tr.HashType, want[tr.InfoHash].typ)
		}
	}
	peers := filepath.Join(dir, "peers.parquet")
	mustRun(t, nil, "export", "--data", data, "--table", "peers", "-o", peers)
	if ps := readParquet[schema.PeerPenalty](t, peers); len(ps) != 0 {
		t.Errorf("the honest peer was penalised: %+v", ps)
	}
}

func readParquet[T any](t *testing.T, path string) []T {
	t.Helper()
	r, err := rowio.Open[T](path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
