package merge

import (
	"bytes"
	"testing"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// v2Of is a full v2 hash whose first 20 bytes are h, its last 12 tail.
func v2Of(h schema.Hash, tail byte) []byte {
	return append(h[:], bytes.Repeat([]byte{tail}, 12)...)
}

// TestUnionHashTypeEitherOrder merges two records of one hash both ways
// (A --from B and B --from A): hash_type and info_hash_v2 must come out
// the same, and never contradict each other (an info_hash_v2 is a v2's).
func TestUnionHashTypeEitherOrder(t *testing.T) {
	h := hashAt(0x42, 1)
	v1 := func() schema.State { return newHash(h, t0) }
	v2 := func(full []byte) schema.State {
		st := newHash(h, t0)
		st.HashType, st.InfoHashV2 = schema.HashV2, full
		return st
	}
	fetched := func(st schema.State) schema.State {
		schedule.ApplySuccess(&st, t0+hour)
		return st
	}
	foreign := v2Of(hashAt(0x42, 2), 0xee)
	for _, c := range []struct {
		name    string
		a, b    schema.State
		typ     int8
		wantV2  []byte
		comment string
	}{
		{"v1 list and v2 with its full hash", v1(), v2(v2Of(h, 1)), schema.HashV2, v2Of(h, 1), "a known v2 hash is v2"},
		{"v1 and a v2 label", v1(), v2(nil), schema.HashV2, nil, "v2 wins, as in dedup"},
		{"two full v2 hashes", v2(v2Of(h, 9)), v2(v2Of(h, 3)), schema.HashV2, v2Of(h, 3), "the smaller bytes"},
		{"fetched v1 and a v2 claim", fetched(v1()), v2(v2Of(h, 1)), schema.HashV1, nil, "the metadata proved v1"},
		{"fetched v2 and a v1 claim", fetched(v2(nil)), v1(), schema.HashV2, nil, "the metadata proved v2"},
		{"fetched v2 takes the full hash", fetched(v2(nil)), v2(v2Of(h, 5)), schema.HashV2, v2Of(h, 5), "the other's full hash"},
		{"a v2 hash of another key", v1(), func() schema.State { s := v1(); s.InfoHashV2 = foreign; return s }(),
			schema.HashV1, nil, "not h's v2 hash"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ab := makeDataset(t, []schema.State{c.a})
			runFromT(t, ab, makeDataset(t, []schema.State{c.b}), t0+day)
			ba := makeDataset(t, []schema.State{c.b})
			runFromT(t, ba, makeDataset(t, []schema.State{c.a}), t0+day)
			x, y := stateOf(t, ab)[h], stateOf(t, ba)[h]
			if x.HashType != y.HashType || !bytes.Equal(x.InfoHashV2, y.InfoHashV2) {
				t.Fatalf("order matters: A --from B gives hash_type %d, info_hash_v2 %x; B --from A gives %d, %x",
					x.HashType, x.InfoHashV2, y.HashType, y.InfoHashV2)
			}
			if x.HashType != c.typ || !bytes.Equal(x.InfoHashV2, c.wantV2) {
				t.Errorf("hash_type %d, info_hash_v2 %x; want %d, %x (%s)", x.HashType, x.InfoHashV2, c.typ, c.wantV2, c.comment)
			}
		})
	}
}
