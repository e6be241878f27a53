package fetch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/tools/badpeers"
)

// TestHashTypeProvenByMetadata: a job's hash_type is only a claim, and
// so is its full v2 hash (info_hash_v2, unchecked input): the 20-byte
// hash is the truth. A peer serving the torrent of the job's 20-byte hash
// is ok whether SHA-1 of the info (v1) or the first 20 bytes of its
// SHA-256 (v2) is that hash, and the result says which (with the full v2
// hash); one that refutes the job's full v2 hash says so in its detail
// and counts in v2_claims_refuted. Metadata matching neither is still
// hash_mismatch, blamed on the peer.
func TestHashTypeProvenByMetadata(t *testing.T) {
	f := newFetcher(t, testOptions())
	v1 := badpeers.NewHybridTorrent(7, 2, 10) // a hybrid: its SHA-256 is an infohash too
	sum := sha256.Sum256(v1.Info)
	v2 := badpeers.Torrent{Info: v1.Info, Name: v1.Name}
	copy(v2.InfoHash[:], sum[:20])
	other := badpeers.NewTorrent(8, 2, 10)
	good := startPeer(t, badpeers.Good, v1, v2)
	wrong, err := badpeers.Start(badpeers.WrongTorrent, badpeers.Config{Other: &other})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wrong.Close() })
	tail := func(h schema.Hash, b byte) []byte { return append(h[:], bytes.Repeat([]byte{b}, 12)...) }

	for _, tt := range []struct {
		name    string
		job     schema.Job
		peer    *badpeers.Peer
		want    string
		wantTyp int8
		wantV2  []byte
	}{
		{"v1 hash labelled v1", schema.Job{InfoHash: v1.InfoHash, HashType: schema.HashV1}, good, schema.OutcomeOK, schema.HashV1, nil},
		{"v1 hash labelled v2", schema.Job{InfoHash: v1.InfoHash, HashType: schema.HashV2}, good, schema.OutcomeOK, schema.HashV1, nil},
		{"v1 hash, no label", schema.Job{InfoHash: v1.InfoHash}, good, schema.OutcomeOK, schema.HashV1, nil},
		{"v2 hash labelled v2", schema.Job{InfoHash: v2.InfoHash, HashType: schema.HashV2}, good, schema.OutcomeOK, schema.HashV2, sum[:]},
		{"v2 hash labelled v1", schema.Job{InfoHash: v2.InfoHash, HashType: schema.HashV1}, good, schema.OutcomeOK, schema.HashV2, sum[:]},
		{"v2 hash, its full hash known", schema.Job{InfoHash: v2.InfoHash, InfoHashV2: sum[:], HashType: schema.HashV2}, good,
			schema.OutcomeOK, schema.HashV2, sum[:]},
		{"v2 hash, another full hash", schema.Job{InfoHash: v2.InfoHash, InfoHashV2: tail(v2.InfoHash, 1), HashType: schema.HashV2}, good,
			schema.OutcomeOK, schema.HashV2, sum[:]},
		{"v1 hash given as a full v2 hash", schema.Job{InfoHash: v1.InfoHash, InfoHashV2: tail(v1.InfoHash, 2), HashType: schema.HashV2}, good,
			schema.OutcomeOK, schema.HashV1, nil},
		{"wrong torrent, labelled v1", schema.Job{InfoHash: v1.InfoHash, HashType: schema.HashV1}, wrong, schema.OutcomeHashMismatch, schema.HashV1, nil},
		{"wrong torrent, labelled v2", schema.Job{InfoHash: v1.InfoHash, HashType: schema.HashV2}, wrong, schema.OutcomeHashMismatch, schema.HashV2, nil},
		{"wrong torrent for a v2 hash", schema.Job{InfoHash: v2.InfoHash, HashType: schema.HashV2}, wrong, schema.OutcomeHashMismatch, schema.HashV2, nil},
		{"wrong torrent, its full v2 hash given", schema.Job{InfoHash: v2.InfoHash, InfoHashV2: sum[:], HashType: schema.HashV2}, wrong,
			schema.OutcomeHashMismatch, schema.HashV2, nil},
		{"wrong torrent, a v1 hash given as v2", schema.Job{InfoHash: v1.InfoHash, InfoHashV2: tail(v1.InfoHash, 2), HashType: schema.HashV2}, wrong,
			schema.OutcomeHashMismatch, schema.HashV2, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.job.Peers = []string{tt.peer.Addr()}
			before := f.stats.v2ClaimsRefuted.Load()
			r, ok := f.Fetch(context.Background(), tt.job)
			if !ok {
				t.Fatal("attempt abandoned")
			}
			checkResult(t, tt.job, r)
			// The job's full v2 hash is refuted when an ok result proves
			// another (or a v1 hash).
			refuted := r.Outcome == schema.OutcomeOK && len(tt.job.InfoHashV2) == 32 && !bytes.Equal(tt.job.InfoHashV2, r.InfoHashV2)
			counted := f.stats.v2ClaimsRefuted.Load() - before
			if named := strings.Contains(r.Detail, "info_hash_v2 "+hex.EncodeToString(tt.job.InfoHashV2)+" was wrong"); named != refuted ||
				counted != map[bool]int64{true: 1}[refuted] {
				t.Errorf("detail %q, v2_claims_refuted +%d; want the claim refuted: %v", r.Detail, counted, refuted)
			}
			if r.Outcome != tt.want || r.HashType != tt.wantTyp || !bytes.Equal(r.InfoHashV2, tt.wantV2) {
				t.Fatalf("outcome %s (%s), hash_type %d, info_hash_v2 %x; want %s, %d, %x",
					r.Outcome, r.Detail, r.HashType, r.InfoHashV2, tt.want, tt.wantTyp, tt.wantV2)
			}
			if tt.want == schema.OutcomeHashMismatch {
				if len(r.PeerFailures) != 1 || r.PeerFailures[0].Addr != tt.peer.Addr() || !strings.Contains(r.Detail, "hashes to") {
					t.Errorf("mismatch not blamed on the peer: %+v (%s)", r.PeerFailures, r.Detail)
				}
			}
		})
	}
}
