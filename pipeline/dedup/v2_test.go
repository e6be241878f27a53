package dedup

import (
	"fmt"
	"os"
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

// wideTypeObs is an observation as another writer may lay it out: an
// INT32 hash_type and any source string.
type wideTypeObs struct {
	InfoHash   schema.Hash `parquet:"info_hash"`
	HashType   int32       `parquet:"hash_type"`
	ObservedAt int64       `parquet:"observed_at,timestamp(millisecond)"`
	Source     string      `parquet:"source"`
}

// TestOtherWritersValues: on the fast column path an empty source is an
// import (as on the row and Arrow paths), and a hash_type beyond int8 is
// bad input rather than the type it wraps to (257 read as 1).
func TestOtherWritersValues(t *testing.T) {
	h := schema.Hash{0x11, 1}
	at := t0.UnixMilli()
	cases := []struct {
		name string
		row  wideTypeObs
		err  string // "" for none
		src  string
	}{
		{"empty source", wideTypeObs{h, 1, at, ""}, "", schema.SourceImport},
		{"a source", wideTypeObs{h, 1, at, "dht_get_peers"}, "", "dht_get_peers"},
		{"hash_type 257", wideTypeObs{h, 257, at, "x"}, "hash_type out of range", ""},
		{"hash_type 3", wideTypeObs{h, 3, at, "x"}, "hash_type 3", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "in.parquet")
			if err := os.WriteFile(in, writeRowsBytes(t, dir, []wideTypeObs{c.row}), 0o644); err != nil {
				t.Fatal(err)
			}
			data := filepath.Join(dir, "ds")
			_, err := run(t, data, nil, in)
			if c.err != "" {
				if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %v, want bad input %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := readState(t, data)[h].LastSource; got != c.src {
				t.Fatalf("last_source %q, want %q", got, c.src)
			}
		})
	}
}
