package fetch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/merge"
	"github.com/infohash/infohash/pipeline/plan"
	"github.com/infohash/infohash/tools/badpeers"
)

// TestRefutedV2ClaimCorrected runs a wrong info_hash_v2 claim through
// plan-retries, fetch and merge: the 20-byte info_hash is the truth. A v1
// torrent's hash claimed as a full v2 hash, and a v2 torrent's hash
// claimed with another full v2 hash (both as an imported list's 64-hex
// line leaves them in the state), are served by a good peer. fetch must
// take the metadata (ok, counted in v2_claims_refuted, the result saying
// which type and v2 hash the metadata proved), and merge must replace the
// claim in the state: no hash_mismatch, no penalty on the good peer, no
// bad-metadata source. fetch used to refuse the metadata as
// hash_mismatch, and merge then penalised the peer and counted it as a
// bad-metadata source of the hash.
func TestRefutedV2ClaimCorrected(t *testing.T) {
	v1 := badpeers.NewHybridTorrent(21, 2, 10) // a hybrid: its SHA-256 is an infohash too
	sum := sha256.Sum256(v1.Info)
	v2 := badpeers.Torrent{Info: v1.Info, Name: v1.Name}
	copy(v2.InfoHash[:], sum[:20])
	good := startPeer(t, badpeers.Good, v1, v2)
	claim := func(h schema.Hash, b byte) []byte { return append(bytes.Clone(h[:]), bytes.Repeat([]byte{b}, 12)...) }

	now := time.Now().UTC()
	cases := []struct {
		name    string
		hash    schema.Hash
		claim   []byte
		wantTyp int8
		wantV2  []byte
	}{
		{"v1 hash claimed as v2", v1.InfoHash, claim(v1.InfoHash, 2), schema.HashV1, nil},
		{"v2 hash claimed with another full hash", v2.InfoHash, claim(v2.InfoHash, 1), schema.HashV2, sum[:]},
	}
	dir := t.TempDir()
	var rows []schema.State
	for _, c := range cases {
		rows = append(rows, schema.State{InfoHash: c.hash, InfoHashV2: c.claim, HashType: schema.HashV2,
			FirstSeen: now.Add(-time.Hour).UnixMilli(), LastSeen: now.Add(-time.Hour).UnixMilli(), SeenCount: 1,
			LastSource: schema.SourceImport, FirstSource: schema.SourceImport, Activity: 1,
			MetadataStatus: schema.StatusNew, Tier: schema.TierHot, Peers: []string{good.Addr()}})
	}
	writeState(t, dir, rows)

	jobs, results := filepath.Join(dir, "jobs.parquet"), filepath.Join(dir, "results.parquet")
	po := plan.DefaultOptions()
	po.Data, po.Now, po.Output = dir, now, jobs
	if _, err := plan.Run(context.Background(), po); err != nil {
		t.Fatal(err)
	}
	o := testOptions()
	o.Input, o.Output = jobs, results
	st, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if st.Outcomes[schema.OutcomeOK] != int64(len(cases)) || st.V2ClaimsRefuted != int64(len(cases)) || len(st.PeerFailures) != 0 {
		t.Errorf("fetch: outcomes %v, v2_claims_refuted %d, peer_failures %v; want %d ok, %d refuted, none",
			st.Outcomes, st.V2ClaimsRefuted, st.PeerFailures, len(cases), len(cases))
	}
	got := readResults(t, results)
	for _, c := range cases {
		r := got[c.hash]
		if r.Outcome != schema.OutcomeOK || r.HashType != c.wantTyp || !bytes.Equal(r.InfoHashV2, c.wantV2) ||
			!bytes.Contains([]byte(r.Detail), fmt.Appendf(nil, "%x", c.claim)) {
			t.Errorf("%s: result %s (%s), hash_type %d, info_hash_v2 %x; want ok naming the refuted claim, %d, %x",
				c.name, r.Outcome, r.Detail, r.HashType, r.InfoHashV2, c.wantTyp, c.wantV2)
		}
	}

	mo := merge.DefaultOptions()
	mo.Data, mo.Inputs, mo.Now = dir, []string{results}, time.Now().UTC()
	ms, err := merge.Run(context.Background(), mo)
	if err != nil {
		t.Fatal(err)
	}
	if ms.Stored != int64(len(cases)) || ms.PeerPenalties != 0 || ms.PeerRows != 0 {
		t.Errorf("merge: ok_stored %d, peer_penalties %d, peer_rows %d; want %d, 0, 0", ms.Stored, ms.PeerPenalties, ms.PeerRows, len(cases))
	}
	state := map[schema.Hash]schema.State{}
	for _, s := range readDatasetTable[schema.State](t, dir, dataset.TableState) {
		state[s.InfoHash] = s
	}
	for _, c := range cases {
		s := state[c.hash]
		if s.MetadataStatus != schema.StatusFetched || s.HashType != c.wantTyp || !bytes.Equal(s.InfoHashV2, c.wantV2) ||
			s.BadMetadata != 0 || len(s.AvoidPeers) != 0 {
			t.Errorf("%s: state %s, hash_type %d, info_hash_v2 %x, bad_metadata %d, avoid_peers %v; want fetched, %d, %x, 0, none",
				c.name, s.MetadataStatus, s.HashType, s.InfoHashV2, s.BadMetadata, s.AvoidPeers, c.wantTyp, c.wantV2)
		}
	}
	if pens := readDatasetTable[schema.PeerPenalty](t, dir, dataset.TablePeers); len(pens) != 0 {
		t.Errorf("peers penalised: %+v", pens)
	}
}

// writeState commits rows as the state of a new dataset in dir, one file
// per partition (rows sorted by hash).
func writeState(t *testing.T, dir string, rows []schema.State) {
	t.Helper()
	datasettest.CommitStateFiles(t, dir, datasettest.HotFiles(rows))
}

// readDatasetTable reads every row of the current snapshot's table.
func readDatasetTable[T any](t *testing.T, dir, table string) []T {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, table, "current", "prefix=*", "*.parquet"))
	more, _ := filepath.Glob(filepath.Join(dir, table, "current", "*.parquet"))
	var out []T
	for _, f := range append(files, more...) {
		rows, err := dataset.ReadFile[T](f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rows...)
	}
	return out
}
