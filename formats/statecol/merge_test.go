package statecol

import (
	"encoding/binary"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

func hashN(n uint64) schema.Hash {
	var h schema.Hash
	h[0] = 1
	binary.BigEndian.PutUint64(h[12:], n)
	return h
}

func TestMergeSorted(t *testing.T) {
	st := func(ns ...uint64) []schema.State {
		out := make([]schema.State, 0, len(ns))
		for _, n := range ns {
			out = append(out, schema.State{InfoHash: hashN(n)})
		}
		return out
	}
	for _, tc := range []struct {
		name string
		a, b []schema.State
		want []uint64
	}{
		{"both empty", nil, nil, nil},
		{"empty b", st(1, 3), nil, []uint64{1, 3}},
		{"empty a", nil, st(2, 4), []uint64{2, 4}},
		{"interleaved", st(1, 3, 5), st(2, 4, 6), []uint64{1, 2, 3, 4, 5, 6}},
		{"b first", st(5, 6), st(1, 2), []uint64{1, 2, 5, 6}},
		{"b last", st(1, 2), st(5, 6), []uint64{1, 2, 5, 6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := MergeSorted(tc.a, tc.b)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d rows, want %d", len(got), len(tc.want))
			}
			for i, n := range tc.want {
				if got[i].InfoHash != hashN(n) {
					t.Fatalf("row %d is %x, want hash %d", i, got[i].InfoHash, n)
				}
			}
		})
	}
}
