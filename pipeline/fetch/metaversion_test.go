package fetch

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/anacrolix/torrent/bencode"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/tools/badpeers"
)

// TestMetadataOfTheOtherVersion: bytes matching the infohash prove
// themselves, but only a v2 or hybrid info dictionary (meta version 2
// and a file tree, BEP 52) is a torrent under its SHA-256, and only one
// with a length or files under its SHA-1. A v1 dictionary served for its
// truncated (or full) SHA-256, and a v2-only one for its SHA-1, are
// invalid_metadata: the hash's failure, not the peer's (none listed, as
// for any verified bytes that are no torrent), which merge counts
// towards proving the hash bad, rightly: no other bytes can match it.
// fetch used to store them ok, the v1 dictionary with hash_type 2. A
// hybrid dictionary is ok under either hash, and a v2-only one under its
// SHA-256.
func TestMetadataOfTheOtherVersion(t *testing.T) {
	v1 := badpeers.NewTorrent(0x51, 2, 10)
	v1AsV2, v1Sum := v1.V2()
	hybrid := badpeers.NewHybridTorrent(0x52, 2, 10)
	hybridV2, _ := hybrid.V2()
	v2Info := bencode.MustMarshal(map[string]any{"meta version": 2, "name": "v2-only", "piece length": 16384,
		"file tree": map[string]any{"a": map[string]any{"": map[string]any{"length": 5, "pieces root": make([]byte, 32)}}}})
	v2Only, _ := badpeers.Torrent{Info: v2Info}.V2()
	v2AsV1 := badpeers.Torrent{InfoHash: sha1.Sum(v2Info), Info: v2Info}
	v2Sum := sha256.Sum256(v2Info)
	good := startPeer(t, badpeers.Good, v1AsV2, hybrid, hybridV2, v2Only, v2AsV1)
	f := newFetcher(t, testOptions())
	for _, tt := range []struct {
		name   string
		job    schema.Job
		want   string
		detail string // in the detail of a failure
	}{
		{"v1 dictionary under its SHA-256", schema.Job{InfoHash: v1AsV2.InfoHash, HashType: schema.HashV2},
			schema.OutcomeInvalidMetadata, "no meta version"},
		{"v1 dictionary under its full SHA-256", schema.Job{InfoHash: v1AsV2.InfoHash, InfoHashV2: v1Sum[:], HashType: schema.HashV2},
			schema.OutcomeInvalidMetadata, "its SHA-1 is " + schema.Hex(v1.InfoHash)},
		{"v1 dictionary under its SHA-256, labelled v1", schema.Job{InfoHash: v1AsV2.InfoHash, HashType: schema.HashV1},
			schema.OutcomeInvalidMetadata, "the metadata's SHA-256 is the infohash (v2)"},
		{"v2-only dictionary under its SHA-1", schema.Job{InfoHash: v2AsV1.InfoHash, HashType: schema.HashV1},
			schema.OutcomeInvalidMetadata, "v2-only"},
		{"v2-only dictionary under its SHA-1, labelled v2", schema.Job{InfoHash: v2AsV1.InfoHash, HashType: schema.HashV2},
			schema.OutcomeInvalidMetadata, "its SHA-256 is " + hex.EncodeToString(v2Sum[:])},
		{"v2-only dictionary under its SHA-256", schema.Job{InfoHash: v2Only.InfoHash, HashType: schema.HashV2}, schema.OutcomeOK, ""},
		{"hybrid dictionary under its SHA-1", schema.Job{InfoHash: hybrid.InfoHash, HashType: schema.HashV1}, schema.OutcomeOK, ""},
		{"hybrid dictionary under its SHA-256", schema.Job{InfoHash: hybridV2.InfoHash, HashType: schema.HashV2}, schema.OutcomeOK, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.job.Peers = []string{good.Addr()}
			r, ok := f.Fetch(context.Background(), tt.job)
			if !ok {
				t.Fatal("attempt abandoned")
			}
			checkResult(t, tt.job, r)
			if r.Outcome != tt.want || !strings.Contains(r.Detail, tt.detail) {
				t.Fatalf("outcome %s (%s), want %s saying %q", r.Outcome, r.Detail, tt.want, tt.detail)
			}
			if len(r.PeerFailures) != 0 {
				t.Errorf("peer failures %+v: the peer served what the infohash names", r.PeerFailures)
			}
		})
	}
}
