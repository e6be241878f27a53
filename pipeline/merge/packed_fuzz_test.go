package merge

import (
	"reflect"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// FuzzUnpack feeds the packed-results reader arbitrary bytes (a spill
// damaged on disk reads back as anything): it must stop with an error or
// at the end of the bytes, never index past them or the string table,
// and the results it reads must come back the same once packed again.
func FuzzUnpack(f *testing.F) {
	var t internTable
	ms := int64(42)
	seed := []result{
		{Result: schema.Result{InfoHash: [20]byte{1, 2, 3}, HashType: 1, Attempt: 3, LeaseID: "lease-1",
			AttemptedAt: 1700000000000, Outcome: schema.OutcomeNoPeers, Detail: "timed out", PeersFound: 2}},
		{Result: schema.Result{InfoHash: [20]byte{9}, HashType: 2, InfoHashV2: make([]byte, 32), LeaseID: "lease-1",
			Outcome: schema.OutcomeOK, PeerFailures: []schema.PeerFailure{{Addr: "127.0.0.1:6881", Class: "reject", At: -5}},
			ConnectMs: &ms, ServedBy: "127.0.0.2:6881", MetadataSize: 1 << 20}},
	}
	var b []byte
	for i := range seed {
		b = t.pack(b, &seed[i])
	}
	f.Add(b)
	f.Add(b[:len(b)-3])
	f.Add([]byte{})
	f.Fuzz(func(tt *testing.T, b []byte) {
		got, err := unpackAll(t.strs, b)
		if err != nil {
			return
		}
		var again internTable
		var b2 []byte
		for i := range got {
			b2 = again.pack(b2, &got[i])
		}
		back, err := unpackAll(again.strs, b2)
		if err != nil || !reflect.DeepEqual(back, got) {
			tt.Fatalf("results read from %x do not read back once packed again: %v\nread %+v\nthen %+v", b, err, got, back)
		}
	})
}

// unpackAll reads every packed result of b.
func unpackAll(strs []string, b []byte) ([]result, error) {
	u := unpacker{strs: strs, b: b}
	var out []result
	for len(u.b) > 0 {
		rest := len(u.b)
		out = append(out, result{})
		if u.next(&out[len(out)-1]); u.err != nil {
			return nil, u.err
		}
		if len(u.b) >= rest {
			panic("unpacker.next read nothing")
		}
	}
	return out, nil
}
