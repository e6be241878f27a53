package dedup

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// TestV2HashFromItsFullForm: observations that give a hash's full v2
// form (info_hash_v2, its first 20 bytes the info_hash) make it a v2 hash
// whatever their hash_type says, in whichever order and runs they come.
func TestV2HashFromItsFullForm(t *testing.T) {
	var plain, full []schema.Observation
	for i := range 30 {
		var v2 [32]byte
		v2[0], v2[1], v2[31] = 0x40+byte(i), byte(i), 9
		o := schema.Observation{HashType: schema.HashV1, ObservedAt: t0.Add(time.Duration(i) * time.Minute).UnixMilli(), Source: schema.SourceGetPeers}
		copy(o.InfoHash[:], v2[:20])
		plain = append(plain, o)
		o.InfoHashV2 = v2[:]
		o.ObservedAt += int64(time.Hour / time.Millisecond)
		full = append(full, o)
	}
	for name, runs := range map[string][][]int{
		"plain then full": {{0}, {1}},
		"full then plain": {{1}, {0}},
		"one run":         {{0, 1}},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			data := filepath.Join(dir, "ds")
			ins := []string{writeObs(t, dir, plain), writeObs(t, dir, full)}
			for _, r := range runs {
				var args []string
				for _, k := range r {
					args = append(args, ins[k])
				}
				if _, err := run(t, data, nil, args...); err != nil {
					t.Fatal(err)
				}
			}
			s := readState(t, data)
			for _, o := range full {
				st := s[o.InfoHash]
				if st.HashType != schema.HashV2 || string(st.InfoHashV2) != string(o.InfoHashV2) || st.SeenCount != 2 {
					t.Fatalf("%x: hash_type %d info_hash_v2 %x seen %d; want 2, %x, 2", o.InfoHash, st.HashType, st.InfoHashV2, st.SeenCount, o.InfoHashV2)
				}
			}
		})
	}
}

// TestTooManySources: an input with more distinct source values than a
// batch can tell apart is bad input, not sources silently merged.
func TestTooManySources(t *testing.T) {
	dir := t.TempDir()
	obs := genObs(51, maxSources+10, maxSources+10)
	for i := range obs {
		obs[i].Source = fmt.Sprintf("src-%d", i)
	}
	in := writeObs(t, dir, obs)
	_, err := run(t, filepath.Join(dir, "ds"), nil, in)
	if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "distinct source values") || !strings.Contains(err.Error(), filepath.Base(in)) {
		t.Fatalf("got %v", err)
	}
}
