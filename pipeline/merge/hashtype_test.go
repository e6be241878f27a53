package merge

import (
	"bytes"
	"crypto/sha256"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/pipeline/schedule"
)

// v2Of is a full v2 hash whose first 20 bytes are h, its last 12 tail.
func v2Of(h schema.Hash, tail byte) []byte {
	return append(h[:], bytes.Repeat([]byte{tail}, 12)...)
}

// TestUnionHashTypeEitherOrder merges two records of one hash both ways
// (A --from B and B --from A): hash_type, info_hash_v2 and its source
// must come out the same, and never contradict each other (an
// info_hash_v2 is a v2's, its source the record's that gave it).
func TestUnionHashTypeEitherOrder(t *testing.T) {
	h := hashAt(0x42, 1)
	v1 := func() schema.State { return newHash(h, t0) }
	v2 := func(full []byte, src ...string) schema.State {
		st := newHash(h, t0)
		st.HashType, st.InfoHashV2 = schema.HashV2, full
		if full != nil {
			st.InfoHashV2Source = schema.SourceImport
		}
		if len(src) > 0 {
			st.InfoHashV2Source = src[0]
		}
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
		wantSrc string
	}{
		{"v1 list and v2 with its full hash", v1(), v2(v2Of(h, 1)), schema.HashV2, v2Of(h, 1), "a known v2 hash is v2",
			schema.SourceImport},
		{"v1 and a v2 label", v1(), v2(nil), schema.HashV2, nil, "v2 wins, as in dedup", ""},
		{"two full v2 hashes", v2(v2Of(h, 9), "x"), v2(v2Of(h, 3), "y"), schema.HashV2, v2Of(h, 3), "the smaller bytes",
			"y"},
		{"one full v2 hash, two sources", v2(v2Of(h, 3), "x"), v2(v2Of(h, 3), "y"), schema.HashV2, v2Of(h, 3),
			"the greater source", "y"},
		{"one known source", v2(v2Of(h, 3), ""), v2(v2Of(h, 3), "x"), schema.HashV2, v2Of(h, 3),
			"a format 11 row's is unknown", "x"},
		{"fetched v1 and a v2 claim", fetched(v1()), v2(v2Of(h, 1)), schema.HashV1, nil, "the metadata proved v1", ""},
		{"fetched v2 and a v1 claim", fetched(v2(nil)), v1(), schema.HashV2, nil, "the metadata proved v2", ""},
		{"fetched v2 takes the full hash", fetched(v2(nil)), v2(v2Of(h, 5)), schema.HashV2, v2Of(h, 5),
			"the other's full hash", schema.SourceImport},
		{"fetched v2 keeps its own", fetched(v2(v2Of(h, 7), schema.V2SourceMetadata)), v2(v2Of(h, 5)), schema.HashV2,
			v2Of(h, 7), "proved", schema.V2SourceMetadata},
		{"a v2 hash of another key", v1(), func() schema.State {
			s := v1()
			s.InfoHashV2, s.InfoHashV2Source = foreign, "x"
			return s
		}(), schema.HashV1, nil, "not h's v2 hash", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ab := makeDataset(t, []schema.State{c.a})
			runFromT(t, ab, makeDataset(t, []schema.State{c.b}), t0+day)
			ba := makeDataset(t, []schema.State{c.b})
			runFromT(t, ba, makeDataset(t, []schema.State{c.a}), t0+day)
			x, y := stateOf(t, ab)[h], stateOf(t, ba)[h]
			if x.HashType != y.HashType || !bytes.Equal(x.InfoHashV2, y.InfoHashV2) || x.InfoHashV2Source != y.InfoHashV2Source {
				t.Fatalf("order matters: A --from B gives hash_type %d, info_hash_v2 %x (%q); B --from A gives %d, %x (%q)",
					x.HashType, x.InfoHashV2, x.InfoHashV2Source, y.HashType, y.InfoHashV2, y.InfoHashV2Source)
			}
			if x.HashType != c.typ || !bytes.Equal(x.InfoHashV2, c.wantV2) || x.InfoHashV2Source != c.wantSrc {
				t.Errorf("hash_type %d, info_hash_v2 %x, source %q; want %d, %x, %q (%s)", x.HashType, x.InfoHashV2,
					x.InfoHashV2Source, c.typ, c.wantV2, c.wantSrc, c.comment)
			}
		})
	}
}

// TestOKResultSetsHashType: an ok result's hash_type (and info_hash_v2)
// is what the metadata proved, and replaces the state's claim (a wrong
// full v2 hash included: fetch's refuted claim), in the state and the
// torrent row alike, counting no bad-metadata source; an ok result whose
// info_hash_v2 or hash_type the info bytes do not bear out is bad input.
func TestOKResultSetsHashType(t *testing.T) {
	info, h1 := torrentInfo("v1")
	v2info := v2TorrentInfo("v2")
	sum := sha256.Sum256(v2info)
	h2 := schema.Hash(sum[:20])
	for _, c := range []struct {
		name    string
		state   schema.State // the claim
		typ     int8         // the result's
		v2      []byte
		info    []byte
		wantTyp int8
		wantV2  []byte
		bad     bool
	}{
		{"v2 label, v1 proof", withType(newHash(h1, t0), schema.HashV2, v2Of(h1, 1)), schema.HashV1, nil, info, schema.HashV1, nil, false},
		{"v1 label, v2 proof", newHash(h2, t0), schema.HashV2, sum[:], v2info, schema.HashV2, sum[:], false},
		{"v2 proof without its full hash", withType(newHash(h2, t0), schema.HashV2, sum[:]), schema.HashV2, nil, v2info, schema.HashV2, sum[:], false},
		{"wrong full v2 claim, v2 proof", withType(newHash(h2, t0), schema.HashV2, v2Of(h2, 1)), schema.HashV2, sum[:], v2info, schema.HashV2, sum[:], false},
		{"v1 result with a v2 hash", newHash(h1, t0), schema.HashV1, v2Of(h1, 1), info, 0, nil, true},
		{"v2 result, another full hash", newHash(h2, t0), schema.HashV2, v2Of(h2, 1), v2info, 0, nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := makeDataset(t, []schema.State{c.state})
			jobs := planJobs(t, dir, t0+hour, 10)
			if len(jobs) != 1 {
				t.Fatalf("%d jobs", len(jobs))
			}
			r := success(jobs[0], c.info, t0+2*hour)
			r.HashType, r.InfoHashV2 = c.typ, c.v2
			_, err := tryMerge(dir, t0+3*hour, writeResults(t, []schema.Result{r}))
			if c.bad {
				if exitcode.Of(err) != exitcode.Usage {
					t.Fatalf("err %v, want bad input", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			st := stateOf(t, dir)[c.state.InfoHash]
			wantSrc := map[bool]string{true: schema.V2SourceMetadata}[len(c.v2) == 32]
			if c.wantV2 != nil && c.v2 == nil {
				wantSrc = c.state.InfoHashV2Source // not proved: still the claim's
			}
			if st.InfoHashV2Source != wantSrc {
				t.Errorf("info_hash_v2_source %q, want %q", st.InfoHashV2Source, wantSrc)
			}
			if st.MetadataStatus != schema.StatusFetched || st.HashType != c.wantTyp || !bytes.Equal(st.InfoHashV2, c.wantV2) ||
				st.BadMetadata != 0 || len(st.AvoidPeers) != 0 {
				t.Errorf("state %s, hash_type %d, info_hash_v2 %x, bad_metadata %d, avoid_peers %v; want fetched, %d, %x, 0, none",
					st.MetadataStatus, st.HashType, st.InfoHashV2, st.BadMetadata, st.AvoidPeers, c.wantTyp, c.wantV2)
			}
			tor := readTable[schema.Torrent](t, dir, dataset.TableTorrents)
			if len(tor) != 1 || tor[0].HashType != c.wantTyp {
				t.Errorf("torrents %+v, want one of hash_type %d", tor, c.wantTyp)
			}
		})
	}
}

func withType(st schema.State, typ int8, v2 []byte) schema.State {
	st.HashType, st.InfoHashV2, st.InfoHashV2Source = typ, v2, schema.SourceImport
	return st
}
