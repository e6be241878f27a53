package dedup

import (
	"path/filepath"
	"testing"

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
