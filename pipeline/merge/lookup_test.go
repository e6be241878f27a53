package merge

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestLookupInOrder: lookup, asked hashes in increasing order from one
// cursor, finds what a search of every row finds: a hash of rows (the
// first of a repeated one), of added, or none, whatever the gaps between
// the hashes asked.
func TestLookupInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tt := range []struct {
		name       string
		rows, asks int
		every      uint64 // a row's hash is a multiple of it
	}{
		{"no row", 0, 20, 1},
		{"one row", 1, 20, 1},
		{"dense asks", 1000, 3000, 2},
		{"sparse asks", 100000, 300, 3},
		{"asks past the last row", 50, 400, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rows := make([]schema.State, tt.rows)
			for i := range rows {
				rows[i].InfoHash = hashAt(0x42, uint64(i)*tt.every)
			}
			if len(rows) > 2 {
				rows[2].InfoHash = rows[1].InfoHash // a hash twice: its first row is found
			}
			added := []schema.State{{InfoHash: hashAt(0x42, 7)}, {InfoHash: hashAt(0x42, 1<<40)}}
			at, n := 0, uint64(0)
			for range tt.asks {
				n += uint64(rng.IntN(int(tt.every)*int(max(tt.rows, 1))/max(tt.asks, 1) + 2))
				h := hashAt(0x42, n)
				if got, want := lookup(rows, added, h, &at), scanFor(rows, added, h); got != want {
					t.Fatalf("lookup(%x) = %p, want %p", h, got, want)
				}
			}
		})
	}
}

// TestLookupMixedPrefixes: lookup finds what a search of every row finds
// when the hashes tie on their first 8 bytes with some rows and not others
// (schema.CompareHash's fast compare and its fallback both decide), when
// rows differ in their last byte only, for a row's hash with its last byte
// one more (a near miss), and for hashes before the first row and after
// the last.
func TestLookupMixedPrefixes(t *testing.T) {
	for _, tt := range []struct {
		name string
		rows int
		seed uint64
	}{
		{"no row", 0, 1},
		{"one row", 1, 2},
		{"few rows", 7, 3},
		{"many rows", 2000, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(tt.seed, 9))
			mk := func() schema.Hash { // few values a byte: ties everywhere
				h := schema.Hash{0x42}
				for i := 1; i < len(h); i++ {
					h[i] = byte(rng.IntN(3)) * 0x7f
				}
				return h
			}
			byHash := func(a, b schema.Hash) int { return bytes.Compare(a[:], b[:]) }
			rows := make([]schema.State, tt.rows)
			for i := range rows {
				rows[i].InfoHash = mk()
				if i > 0 && i%3 == 0 { // a row that differs from the one before in its last byte only
					rows[i].InfoHash = rows[i-1].InfoHash
					rows[i].InfoHash[19] ^= 0x01
				}
			}
			slices.SortFunc(rows, func(a, b schema.State) int { return byHash(a.InfoHash, b.InfoHash) })
			rows = slices.CompactFunc(rows, func(a, b schema.State) bool { return a.InfoHash == b.InfoHash })
			asks := []schema.Hash{{}, {0: 0xff, 19: 0xff}} // before every row, after every row
			for range 3 * len(rows) {
				asks = append(asks, mk())
				if len(rows) > 0 {
					h := rows[rng.IntN(len(rows))].InfoHash
					asks = append(asks, h)
					h[19]++
					asks = append(asks, h)
				}
			}
			slices.SortFunc(asks, byHash)
			asks = slices.Compact(asks)
			var added []schema.State
			for i, h := range asks {
				if _, ok := slices.BinarySearchFunc(rows, h, func(s schema.State, h schema.Hash) int { return byHash(s.InfoHash, h) }); !ok && i%4 == 0 {
					added = append(added, schema.State{InfoHash: h})
				}
			}
			at := 0
			for _, h := range asks {
				if got, want := lookup(rows, added, h, &at), scanFor(rows, added, h); got != want {
					t.Fatalf("lookup(%x) = %p, want %p", h, got, want)
				}
			}
		})
	}
}

// scanFor is what lookup finds, by a scan: h's row in rows, else its
// first row in added, else nil.
func scanFor(rows, added []schema.State, h schema.Hash) *schema.State {
	for _, list := range [][]schema.State{rows, added} {
		for i := range list {
			if list[i].InfoHash == h {
				return &list[i]
			}
		}
	}
	return nil
}
