package dedup

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"unsafe"

	"github.com/infohash/infohash/formats/schema"
)

// TestSortedOrder: a partition's aggregates come out in hash order
// whether its buckets are small (insertion sort) or large (pdqsort), by
// 8 to 16 bits after the partition's byte (7800 is a 10M run's partition).
func TestSortedOrder(t *testing.T) {
	for _, n := range []int{0, 1, 500, 513, 7800, 40000, 100000} {
		b := newBatch(3600_000)
		r := rand.New(rand.NewPCG(uint64(n), 1))
		for range n {
			var h schema.Hash
			h[0] = 7
			for j := 1; j < len(h); j++ {
				h[j] = byte(r.Uint32())
			}
			if r.IntN(10) == 0 {
				h[2], h[3] = 0, 0 // share bytes 2-9 with others: the tie-break
			}
			b.add(h, nil, schema.HashV1, 1, schema.SourceGetPeers)
		}
		es := b.sorted(7, make([]entry, 3))
		if len(es) != b.parts[7].n {
			t.Fatalf("n=%d: %d entries, want %d", n, len(es), b.parts[7].n)
		}
		if !slices.IsSortedFunc(es, func(x, y entry) int { return bytes.Compare(x.h[:], y.h[:]) }) {
			t.Fatalf("n=%d: not in hash order", n)
		}
		b.release()
	}
}

// TestV2HashesThroughTheFastPath: full v2 hashes on some observations of
// a hash (others carry only the truncation, as the DHT does) end up in the
// state row of that hash, and only there.
func TestV2HashesThroughTheFastPath(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	obs := genObs(3, 30000, 3000)
	full := func(h schema.Hash) []byte {
		return append(h[:], bytes.Repeat([]byte{h[19] ^ 0x5a}, 12)...)
	}
	isV2 := func(h schema.Hash) bool { return h[7]%5 == 0 }
	for i := range obs {
		if h := obs[i].InfoHash; isV2(h) {
			obs[i].HashType = schema.HashV2
			if i%2 == 0 {
				obs[i].InfoHashV2 = full(h)
			}
		}
	}
	if _, err := run(t, data, nil, writeObs(t, dir, obs)); err != nil {
		t.Fatal(err)
	}
	got := readState(t, data)
	compare(t, got, truth(obs))
	var withV2 int
	for _, o := range obs {
		s := got[o.InfoHash]
		switch {
		case o.InfoHashV2 != nil:
			withV2++
			if s.HashType != schema.HashV2 || !bytes.Equal(s.InfoHashV2, o.InfoHashV2) {
				t.Fatalf("hash %x: state type %d v2 %x, want 2 and %x", o.InfoHash, s.HashType, s.InfoHashV2, o.InfoHashV2)
			}
		case !isV2(o.InfoHash):
			if s.HashType != schema.HashV1 || s.InfoHashV2 != nil {
				t.Fatalf("v1 hash %x: state type %d v2 %x", o.InfoHash, s.HashType, s.InfoHashV2)
			}
		}
	}
	if withV2 == 0 {
		t.Fatal("the test made no v2 observation")
	}
}

// TestFirstSightingFarFromLast: an aggregate keeps its first sighting as a
// 32-bit distance to the last; a batch spanning more than 49 days keeps
// the far ones aside, and the state gets them right either way.
func TestFirstSightingFarFromLast(t *testing.T) {
	if size := unsafe.Sizeof(agg{}); size != 48 {
		t.Fatalf("agg is %d bytes, want 48 (20M distinct hashes: 20 MB a byte)", size)
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	obs := genObs(4, 20000, 2000)
	day := int64(24 * 3600 * 1000)
	for i := range obs {
		switch i % 4 {
		case 1:
			obs[i].ObservedAt -= 100 * day // far before the others
		case 2:
			obs[i].ObservedAt -= 30 * day // within reach of the last
		}
	}
	if _, err := run(t, data, nil, writeObs(t, dir, obs)); err != nil {
		t.Fatal(err)
	}
	compare(t, readState(t, data), truth(obs))
}

// TestArenaSlots: slot arrays come zeroed and apart; a freed one gives its
// pages back (reads as zeros again) without touching its neighbours, and
// freeing a Go slice is a no-op.
func TestArenaSlots(t *testing.T) {
	a := &arena{}
	defer a.release()
	x, y := a.slots(1<<16), a.slots(1<<16)
	for i := range x {
		if x[i] != 0 || y[i] != 0 {
			t.Fatal("a new slot array is not zeroed")
		}
		x[i], y[i] = int32(i+1), int32(i+2)
	}
	a.freeSlots(x)
	for i := range y {
		if y[i] != int32(i+2) {
			t.Fatalf("freeing one array changed its neighbour at %d", i)
		}
	}
	if x[len(x)/2] != 0 {
		t.Fatal("a freed array's inner pages were not given back")
	}
	heap := make([]int32, 1<<16)
	heap[100] = 7
	a.freeSlots(heap)
	if heap[100] != 7 {
		t.Fatal("freeSlots touched memory it does not own")
	}
}

// TestTableSlotWidths: a table keeps every aggregate findable while its
// slots are 16-bit (checked at the fullest a narrow table gets) and after
// it grows to 32-bit ones.
func TestTableSlotWidths(t *testing.T) {
	for run := range 2 {
		tb := &table{arena: &arena{}}
		defer tb.arena.release()
		r := rand.New(rand.NewPCG(7, uint64(run)))
		hs := make([]schema.Hash, 3*maxNarrowSlots/2)
		for i := range hs {
			for j := range hs[i] {
				hs[i][j] = byte(r.Uint32())
			}
		}
		check := func(n int, narrow bool) {
			t.Helper()
			if tb.narrow() != narrow {
				t.Fatalf("run %d: at %d aggregates narrow=%v, want %v", run, n, tb.narrow(), narrow)
			}
			for i := range hs[:n] {
				a, _, found := tb.find(&hs[i])
				if !found || a.count != uint32(i) || a.h != hs[i] {
					t.Fatalf("run %d: at %d aggregates: hash %d found %v, count %d", run, n, i, found, a.count)
				}
			}
		}
		for i := range hs {
			if i == maxNarrowSlots/2-1 {
				check(i, true)
			}
			a, _, found := tb.find(&hs[i])
			if found {
				t.Fatalf("hash %d found before it was added", i)
			}
			a.count = uint32(i)
		}
		check(len(hs), false)
	}
}

// TestFoldKeepsAProvenHashType: observations claiming v2 make a hash v2,
// unless it is fetched: then merge set its type from the metadata, and a
// label (or a full v2 hash) from some input no longer changes it. A
// fetched v2 hash still learns its full v2 hash.
func TestFoldKeepsAProvenHashType(t *testing.T) {
	h := schema.Hash{0x33, 1, 2}
	full := append(h[:], bytes.Repeat([]byte{9}, 12)...)
	for _, c := range []struct {
		name    string
		status  string
		typ     int8
		obsV2   []byte
		obsTyp  int8
		wantTyp int8
		wantV2  []byte
	}{
		{"new v1, v2 label", schema.StatusNew, schema.HashV1, nil, schema.HashV2, schema.HashV2, nil},
		{"failed v1, full v2", schema.StatusFailed, schema.HashV1, full, schema.HashV1, schema.HashV2, full},
		{"fetched v1, v2 label", schema.StatusFetched, schema.HashV1, nil, schema.HashV2, schema.HashV1, nil},
		{"fetched v1, full v2", schema.StatusFetched, schema.HashV1, full, schema.HashV2, schema.HashV1, nil},
		{"fetched v2, full v2", schema.StatusFetched, schema.HashV2, full, schema.HashV2, schema.HashV2, full},
		{"fetched v2, v1 label", schema.StatusFetched, schema.HashV2, nil, schema.HashV1, schema.HashV2, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBatch(3600_000)
			defer b.release()
			b.add(h, c.obsV2, c.obsTyp, 2000, schema.SourceGetPeers)
			a, _, ok := b.parts[h[0]].find(&h)
			if !ok {
				t.Fatal("no aggregate")
			}
			st := schema.State{InfoHash: h, HashType: c.typ, FirstSeen: 1000, LastSeen: 1000, SeenCount: 1,
				LastSource: schema.SourceImport, Activity: 1, MetadataStatus: c.status, Tier: schema.TierHot}
			b.fold(&st, a)
			if st.HashType != c.wantTyp || !bytes.Equal(st.InfoHashV2, c.wantV2) || st.SeenCount != 2 {
				t.Errorf("hash_type %d, info_hash_v2 %x, seen %d; want %d, %x, 2", st.HashType, st.InfoHashV2, st.SeenCount, c.wantTyp, c.wantV2)
			}
		})
	}
}
