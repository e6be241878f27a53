package dedup

import (
	"reflect"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestSetNewStateOverwrites: setNewState writes the whole row in place,
// whatever the buffer held (WriteStateFunc's buffers are pooled, and a
// splice leaves rows with attempts, failures and leases in them): the row
// is newState's, the one made afresh.
func TestSetNewStateOverwrites(t *testing.T) {
	b := newBatch(3600_000)
	defer b.release()
	h1, h2 := schema.Hash{1, 2, 3}, schema.Hash{9, 8, 7}
	v2 := append(h2[:], make([]byte, 12)...)
	b.add(h1, nil, schema.HashV1, 1_700_000_000_000, schema.SourceGetPeers)
	b.add(h1, nil, schema.HashV1, 1_700_000_100_000, schema.SourceAnnouncePeer)
	b.add(h2, v2, schema.HashV2, 1_700_000_000_000, schema.SourceSampleInfohashes)
	junk := schema.State{InfoHash: schema.Hash{0xff}, InfoHashV2: []byte("old"), HashType: 9, Attempts: 4,
		LastAttempt: 5, LastFailure: "timeout", LeaseID: "l", LeaseUntil: 6, Tier: "cold", BackoffStep: 2,
		BadMetadata: 1, Reactivated: 7, AvoidPeers: []string{"1.2.3.4:5"}, Peers: []string{"6.7.8.9:10"},
		LastFailureAt: 8, PeersAt: 9, InfoHashV2Source: "metadata", MetadataStatus: "failed"}
	for name, h := range map[string]schema.Hash{"v1": h1, "v2 with its full hash": h2} {
		t.Run(name, func(t *testing.T) {
			es := b.sorted(h[0], nil)
			if len(es) != 1 || es[0].h != h {
				t.Fatalf("partition %02x: %d entries, want the one of %x", h[0], len(es), h)
			}
			want := b.newState(&es[0], 42)
			got := junk
			b.setNewState(&got, &es[0], 42)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("setNewState over a used row:\n got %+v\nwant %+v", got, want)
			}
			if want.MetadataStatus != schema.StatusNew || want.Tier != schema.TierHot || want.NextRetry != 42 ||
				want.AvoidPeers != nil || want.Attempts != 0 {
				t.Fatalf("newState = %+v, not a new hash's row", want)
			}
		})
	}
}
