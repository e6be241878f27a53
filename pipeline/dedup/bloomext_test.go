package dedup

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/bits-and-blooms/bloom/v3"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// later is obs sighted ms later: other bytes (not an input already
// applied), the same hashes.
func later(obs []schema.Observation, ms int64) []schema.Observation {
	out := make([]schema.Observation, len(obs))
	copy(out, obs)
	for i := range out {
		out[i].ObservedAt += ms
	}
	return out
}

// TestExtendedBloomKnowsTheNewHashes: the hashes a run adds go into the
// partitions' extended filters (appended as a delta, or with known ones
// spliced), so a later run finds every one of them a Bloom positive and
// known, and adds no row twice.
func TestExtendedBloomKnowsTheNewHashes(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	a := genObs(21, 6000, 5000)
	b := genObs(22, 6000, 5000)
	steps := []struct {
		name string
		obs  []schema.Observation
	}{
		{"first", a},
		{"new hashes and some known", append(later(a[:1500], 1000), b...)},
		{"the new hashes again", later(b, 2000)},
	}
	var st Stats
	var all [][]schema.Observation
	for _, s := range steps {
		all = append(all, s.obs)
		var err error
		if st, err = run(t, data, nil, writeObs(t, dir, s.obs)); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
	}
	if st.New != 0 || st.BloomNegatives != 0 {
		t.Fatalf("last run: %d new, %d Bloom negatives; want 0: the filters lack hashes the run before added", st.New, st.BloomNegatives)
	}
	compare(t, readState(t, data), truth(all...))
}

// TestStagedFiltersAreTheLibrarys: every filter dedup stages (made
// anew, extended, grown, rebuilt by a compaction), read back by the
// library's own ReadFrom, answers its Test true of every hash of the
// partition and has exactly the bits its Add sets for them: the filters
// dedup fills through bloom20 are the library's.
func TestStagedFiltersAreTheLibrarys(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	// Most hashes in one partition, to pass the smallest filter's room
	// (minBloomCap) with few of them.
	one := func(obs []schema.Observation) []schema.Observation {
		for i := range obs {
			obs[i].InfoHash[0] = 0xab
		}
		return obs
	}
	a := append(one(genObs(31, 3000, 2000)), genObs(32, 500, 400)...)
	b := one(genObs(33, 5000, 4000))
	steps := []struct {
		name string
		obs  []schema.Observation
	}{
		{"new filters", a},
		{"extended, within their room", append(later(a[:500], 1000), one(genObs(34, 600, 500))...)},
		{"grown past their room", b},
		{"compacted (MaxFiles)", append(later(b[:1000], 2000), one(genObs(35, 600, 500))...)},
		{"known hashes only", later(a, 3000)},
	}
	for _, s := range steps {
		if _, err := run(t, data, func(o *Options) { o.MaxFiles = 3 }, writeObs(t, dir, s.obs)); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		byPart := map[string][]schema.Hash{}
		for h := range readState(t, data) {
			key := fmt.Sprintf("%02x", h[0])
			byPart[key] = append(byPart[key], h)
		}
		d, err := dataset.Open(context.Background(), data, dataset.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		m, _ := d.Current()
		tb := m.Table(dataset.TableState)
		if len(tb.Blooms) != len(byPart) {
			t.Fatalf("%s: %d filters for %d partitions", s.name, len(tb.Blooms), len(byPart))
		}
		for key, hs := range byPart {
			b, err := os.ReadFile(d.Path(tb.BloomPath(tb.Blooms[key])))
			if err != nil {
				t.Fatalf("%s: partition %s: %v", s.name, key, err)
			}
			got := &bloom.BloomFilter{}
			if _, err := got.ReadFrom(bytes.NewReader(b)); err != nil {
				t.Fatalf("%s: partition %s: the library cannot read the filter: %v", s.name, key, err)
			}
			want := bloom.New(got.Cap(), got.K())
			for _, h := range hs {
				if !got.Test(h[:]) {
					t.Fatalf("%s: partition %s: the library's Test of the filter is false of hash %x", s.name, key, h)
				}
				want.Add(h[:])
			}
			if !got.Equal(want) || !slices.Equal(got.BitSet().Words(), want.BitSet().Words()) {
				t.Fatalf("%s: partition %s: the filter's bits are not those the library's Add sets for its %d hashes",
					s.name, key, len(hs))
			}
		}
	}
}

// TestBloomOfIsTheLibrarys: the filter bloomOf (StageBloom, compactions)
// fills through bloom20 has the bits the library's Add sets for the same
// hashes, at every size dedup makes: the smallest, and larger.
func TestBloomOfIsTheLibrarys(t *testing.T) {
	for _, n := range []int{0, 1, 3000, 40000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			hs := make([]schema.Hash, n)
			for i, o := range genObs(uint64(40+n), n, n) {
				hs[i] = o.InfoHash
			}
			got, c := bloomOf(hs, 0.01)
			want, _ := newBloom(int64(n), 0.01)
			for i := range hs {
				want.Add(hs[i][:])
			}
			if c != max(2*int64(n), minBloomCap) || got.Cap() != want.Cap() || got.K() != want.K() {
				t.Fatalf("capacity %d, m %d, k %d; want %d, %d, %d", c, got.Cap(), got.K(), max(2*n, minBloomCap), want.Cap(), want.K())
			}
			if !slices.Equal(got.BitSet().Words(), want.BitSet().Words()) {
				t.Fatalf("%d hashes: bloomOf's bits are not those the library's Add sets", n)
			}
			for i := range hs {
				if !got.Test(hs[i][:]) {
					t.Fatalf("the library's Test of bloomOf's filter is false of hash %x", hs[i])
				}
			}
		})
	}
}
