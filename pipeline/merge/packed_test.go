package merge

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// TestPackedKeepsEveryColumn: a result packed (internTable.pack) and
// unpacked comes back as it was: every field of schema.Result but its
// metadata columns (ResultMeta), null or not, empty or not, and the
// metadata reference. A column added to schema.Result and not packed
// fails the first case rather than vanish between reading and applying.
// The results are packed one after the other into one buffer, as a
// partition's are, with a table of strings that fills up on the way.
func TestPackedKeepsEveryColumn(t *testing.T) {
	var every result
	v := reflect.ValueOf(&every.Result).Elem()
	rt := v.Type()
	for i := range v.NumField() {
		if rt.Field(i).Name != "ResultMeta" {
			setNonZero(t, rt.Field(i).Name, v.Field(i), i)
		}
	}
	every.meta = metaRef{off: 1, n: 2, infoLen: 3}
	ms := int64(-7)
	tests := []struct {
		name string
		res  result
	}{
		{"every column set", every},
		{"zero", result{}},
		{"empty lists, not null", result{Result: schema.Result{InfoHashV2: []byte{}, PeerFailures: []schema.PeerFailure{}}}},
		{"negative and large values", result{Result: schema.Result{InfoHash: schema.Hash{0xff, 19: 0xee}, HashType: -1,
			Attempt: -2, AttemptedAt: -1 << 62, PeersFound: 1<<31 - 1, PeersTried: -1 << 31, MetadataSize: 1<<63 - 1,
			TotalMs: &ms, VerifyMs: &ms}, meta: metaRef{off: 1 << 40, n: 1, infoLen: -1}}},
		{"failures", result{Result: schema.Result{LeaseID: "lease-a", Outcome: schema.OutcomeNoUTMetadata,
			Detail: "timed out", PeerFailures: []schema.PeerFailure{
				{Addr: "127.0.0.1:6881", Class: schema.OutcomeNoUTMetadata, At: 5},
				{Addr: "[::1]:1", Class: schema.OutcomeHashMismatch, At: -5},
				{},
			}}}},
		{"bytes that are not UTF-8", result{Result: schema.Result{LeaseID: "\xff\x00", Detail: "\x00\xfe",
			ServedBy: "\xc3", InfoHashV2: []byte{0, 1, 2}}}},
	}
	var tab internTable
	var b []byte
	var want []result
	for _, tt := range tests {
		b = tab.pack(b, &tt.res)
		want = append(want, tt.res)
	}
	// Past maxInterned strings, the rest are packed as they are.
	for i := range maxInterned + 2 {
		res := result{Result: schema.Result{LeaseID: fmt.Sprint("lease-", i), Outcome: schema.OutcomeNoPeers}}
		b = tab.pack(b, &res)
		want = append(want, res)
	}
	if len(tab.strs) != maxInterned {
		t.Errorf("table holds %d strings, want %d", len(tab.strs), maxInterned)
	}
	got, err := expand(part{g: group{b: b, n: len(want)}, strs: tab.strs}, nil, new([]result), new([]byte))
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		name := fmt.Sprint("lease ", i-len(tests))
		if i < len(tests) {
			name = tests[i].name
		}
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("%s: packed and back:\n got  %+v\n want %+v", name, got[i], want[i])
		}
	}
}

// TestAddRefusesUnspilled: an ok result whose metadata is not in the
// spill is refused (a packed result has no room for it).
func TestAddRefusesUnspilled(t *testing.T) {
	var p prefixed
	p.add(&result{Result: schema.Result{Outcome: schema.OutcomeOK}})
	if p.err == nil || p.n != 0 {
		t.Fatalf("add took an ok result whose metadata is not in the spill: err %v, n %d", p.err, p.n)
	}
}

// setNonZero sets v, a field of schema.Result, to a value other than its
// zero, made from i.
func setNonZero(t *testing.T, name string, v reflect.Value, i int) {
	t.Helper()
	n := int64(i + 1)
	switch v.Kind() {
	case reflect.Array:
		v.Index(0).SetUint(uint64(n))
	case reflect.Int8, reflect.Int32, reflect.Int64:
		v.SetInt(n)
	case reflect.String:
		v.SetString(name)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		p.Elem().SetInt(n)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		if e := s.Index(0); e.Kind() == reflect.Struct {
			e.Field(0).SetString(name)
		} else {
			e.SetUint(uint64(n))
		}
		v.Set(s)
	default:
		t.Fatalf("field %s: set no value of kind %v", name, v.Kind())
	}
}

// TestPrefixedSpills: with a spill, prefixed holds at most a chunk of
// packed bytes a partition (spillChunk), the rest going to the spill as
// the results are read, and each partition's results come back whole and
// in the order read, from chunks and the bytes held, however the
// partitions' rows were interleaved.
func TestPrefixedSpills(t *testing.T) {
	defer func(n int) { spillChunk = n }(spillChunk)
	spillChunk = 512
	p, sp := newPrefixed(t)
	want := map[byte][]result{}
	for i := range 3000 {
		var r result
		r.InfoHash = hashAt(byte(i%3), uint64(i))
		r.LeaseID, r.Outcome, r.AttemptedAt = fmt.Sprint("lease-", i%5), schema.OutcomeNoPeers, int64(i)
		if i%7 == 0 {
			r.Detail = strings.Repeat("x", i%300) // rows of every size: chunks end anywhere
			r.PeerFailures = []schema.PeerFailure{{Addr: fmt.Sprint("127.0.0.1:", i), Class: schema.OutcomeNoPeers, At: int64(i)}}
		}
		p.add(&r)
		want[r.InfoHash[0]] = append(want[r.InfoHash[0]], r)
		for b := range 3 {
			if g := p.groups[b]; len(g.b) >= spillChunk {
				t.Fatalf("after %d rows, partition %02x holds %d bytes, not under %d", i+1, b, len(g.b), spillChunk)
			}
		}
	}
	if p.err != nil || p.n != 3000 {
		t.Fatalf("add: %v, %d rows", p.err, p.n)
	}
	if sp.off < 100*int64(spillChunk) {
		t.Fatalf("the spill took %d bytes: the rows were held", sp.off)
	}
	parts := p.parts()
	if len(parts) != 3 {
		t.Fatalf("%d parts, want 3", len(parts))
	}
	var buf []result
	var packed []byte
	for _, pt := range parts {
		got, err := expand(pt, sp, &buf, &packed)
		if err != nil {
			t.Fatal(err)
		}
		var b byte
		if _, err := fmt.Sscanf(pt.key, "%02x", &b); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want[b]) {
			t.Fatalf("partition %s: %d results back, want %d, or not the same", pt.key, len(got), len(want[b]))
		}
	}
}

// TestExpandRefusesDamagedSpill: a partition whose packed results read
// back from the spill are not what was written (cut short, overwritten)
// fails with an error naming the spill and the partition, as a damaged
// metadata entry does (decodeMeta), rather than crash merge on an index
// out of range or hand out results made of other bytes.
func TestExpandRefusesDamagedSpill(t *testing.T) {
	defer func(n int) { spillChunk = n }(spillChunk)
	spillChunk = 256
	for _, tt := range []struct {
		name   string
		damage func(t *testing.T, path string, size int64)
	}{
		{"cut short", func(t *testing.T, path string, size int64) {
			if err := os.Truncate(path, size-10); err != nil {
				t.Fatal(err)
			}
		}},
		{"overwritten with 0xff", func(t *testing.T, path string, size int64) { overwrite(t, path, 0, size, 0xff) }},
		{"overwritten with zeros", func(t *testing.T, path string, size int64) { overwrite(t, path, size/3, size/2, 0) }},
		{"a length past the end", func(t *testing.T, path string, size int64) { overwrite(t, path, 21, 40, 0x7f) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, sp := newPrefixed(t)
			for i := range 200 {
				var r result
				r.InfoHash = hashAt(0x07, uint64(i))
				r.LeaseID, r.Outcome, r.AttemptedAt, r.Detail = "lease", schema.OutcomeNoPeers, int64(i+1), "timed out"
				p.add(&r)
			}
			if p.err != nil || len(p.groups[0x07].chunks) < 2 {
				t.Fatalf("add: %v, %d chunks", p.err, len(p.groups[0x07].chunks))
			}
			tt.damage(t, sp.path(), sp.off)
			parts := p.parts()
			var rs []result
			var err2 error
			func() {
				defer func() {
					if v := recover(); v != nil {
						t.Fatalf("expand panicked: %v", v)
					}
				}()
				rs, err2 = expand(parts[0], sp, new([]result), new([]byte))
			}()
			if err2 == nil {
				t.Fatalf("expand took a damaged spill: %d results", len(rs))
			}
			if msg := err2.Error(); !strings.Contains(msg, sp.path()) || !strings.Contains(msg, "partition 07") {
				t.Fatalf("error %q does not name the spill and the partition", msg)
			}
		})
	}
}

// overwrite sets bytes [from, to) of the file at path to b.
func overwrite(t *testing.T, path string, from, to int64, b byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(bytes.Repeat([]byte{b}, int(to-from)), from); err != nil {
		t.Fatal(err)
	}
}

// TestPrefixedSpillsAnyChunk: random results (every column null or not,
// negative and large values, strings of a few repeated values, of
// thousands, of over 127 bytes, lists empty or not) over four partitions
// come back as they were added whatever the chunk size: a byte (every
// result in chunks of its own), smaller than a result, a few results,
// or the default.
func TestPrefixedSpillsAnyChunk(t *testing.T) {
	for _, tt := range []struct {
		name  string
		chunk int
	}{{"a byte", 1}, {"smaller than a result", 7}, {"a few results", 100}, {"the default", spillChunk}} {
		t.Run(tt.name, func(t *testing.T) {
			defer func(n int) { spillChunk = n }(spillChunk)
			spillChunk = tt.chunk
			p, sp := newPrefixed(t)
			want := map[string][]result{}
			rng := rand.New(rand.NewPCG(uint64(tt.chunk), 1))
			for range 5000 {
				r := randomResult(rng)
				p.add(&r)
				key := fmt.Sprintf("%02x", r.InfoHash[0])
				want[key] = append(want[key], r)
			}
			if p.err != nil {
				t.Fatal(p.err)
			}
			var buf []result
			var packed []byte
			for _, pt := range p.parts() {
				got, err := expand(pt, sp, &buf, &packed)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want[pt.key]) {
					t.Fatalf("partition %s: %d results back, want %d, or not the same", pt.key, len(got), len(want[pt.key]))
				}
			}
		})
	}
}

// randomResult is a result of partition 00 to 03 whose every column is
// drawn from rng; an ok one has a metadata reference.
func randomResult(rng *rand.Rand) result {
	ms := func() *int64 {
		if rng.IntN(2) == 0 {
			return nil
		}
		return new(rng.Int64() - rng.Int64())
	}
	str := func() string {
		switch rng.IntN(4) {
		case 0:
			return ""
		case 1:
			return strings.Repeat("é", rng.IntN(200))
		case 2:
			return fmt.Sprint("many-", rng.IntN(70000))
		}
		return fmt.Sprint("few-", rng.IntN(3))
	}
	var r result
	r.InfoHash[0], r.InfoHash[19] = byte(rng.IntN(4)), byte(rng.IntN(3))
	r.HashType, r.Attempt = int8(rng.IntN(256)-128), int32(rng.Uint32())
	r.LeaseID, r.Outcome, r.Detail, r.ServedBy = str(), str(), str(), str()
	r.AttemptedAt, r.MetadataSize = rng.Int64()-rng.Int64(), rng.Int64()-rng.Int64()
	r.PeersFound, r.PeersTried = int32(rng.Uint32()), int32(rng.Uint32())
	r.LookupMs, r.ConnectMs, r.MetadataMs, r.TotalMs = ms(), ms(), ms(), ms()
	r.HandshakeMs, r.ExtensionMs, r.VerifyMs = ms(), ms(), ms()
	switch rng.IntN(3) {
	case 1:
		r.InfoHashV2 = []byte{}
	case 2:
		r.InfoHashV2 = bytes.Repeat([]byte{byte(rng.IntN(256))}, 1+rng.IntN(40))
	}
	if rng.IntN(2) == 0 {
		r.PeerFailures = []schema.PeerFailure{}
		for range rng.IntN(5) {
			r.PeerFailures = append(r.PeerFailures, schema.PeerFailure{Addr: str(), Class: str(), At: rng.Int64() - rng.Int64()})
		}
	}
	if rng.IntN(4) == 0 {
		r.Outcome = schema.OutcomeOK
		r.meta = metaRef{off: rng.Int64N(1 << 50), n: 1 + rng.Int64N(1<<30), infoLen: rng.Int64N(1 << 30)}
	} else if r.Outcome == schema.OutcomeOK {
		r.Outcome = "not ok"
	}
	return r
}

// newPrefixed returns an empty prefixed holding its results in a new
// spill of a new dataset (both closed when the test ends).
func newPrefixed(t *testing.T) (*prefixed, *metaSpill) {
	t.Helper()
	d, err := dataset.Open(context.Background(), makeDataset(t, nil), dataset.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	sp := newMetaSpill(d)
	t.Cleanup(sp.close)
	return &prefixed{spill: sp}, sp
}
