package schema

import (
	"bytes"
	"testing"

	"github.com/parquet-go/parquet-go"
)

func roundTrip[T any](t *testing.T, rows []T) []T {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[T](&buf)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := parquet.Read[T](bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestSchemasRoundTrip(t *testing.T) {
	h := Hash{1, 2, 3}
	res := roundTrip(t, []Result{{InfoHash: h, HashType: HashV1, Outcome: OutcomeOK,
		PeerFailures: []PeerFailure{{Addr: "127.0.0.1:1", Class: OutcomeRejected, At: 5}},
		ResultMeta:   OKMeta(Meta{Name: new("x"), NameRaw: []byte("x"), NameUTF8Valid: true, Files: []File{{Path: "a/b", PathRaw: []byte("a/b"), Length: 3}}})}})
	if res[0].InfoHash != h || res[0].Files[0].Length != 3 || res[0].PeerFailures[0].Class != OutcomeRejected || res[0].NameOr() != "x" {
		t.Fatalf("result round trip: %+v", res[0])
	}
	st := roundTrip(t, []State{{InfoHash: h, HashType: HashV2, NextRetry: 0, LastFailure: ""}, {InfoHash: h, NextRetry: 7, LastFailure: "no_peers"}})
	if st[0].HashType != HashV2 || st[1].NextRetry != 7 || st[1].LastFailure != "no_peers" {
		t.Fatalf("state round trip: %+v", st)
	}
	sch := parquet.SchemaOf(State{})
	for _, c := range []string{"next_retry", "lease_id"} {
		f, ok := sch.Lookup(c)
		if !ok || !f.Node.Optional() {
			t.Errorf("column %s should be optional", c)
		}
	}
}

func TestParseHex(t *testing.T) {
	tests := []struct {
		name, in string
		typ      int8
		wantErr  bool
	}{
		{"v1", "0123456789abcdef0123456789abcdef01234567", HashV1, false},
		{"v1 upper", "0123456789ABCDEF0123456789ABCDEF01234567", HashV1, false},
		{"v2", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", HashV2, false},
		{"short", "0123", 0, true},
		{"bad char", "z123456789abcdef0123456789abcdef01234567", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, v2, typ, err := ParseHex(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v", err)
			}
			if err != nil {
				return
			}
			if typ != tt.typ || h[0] != 0x01 || (typ == HashV2) != (len(v2) == 32) {
				t.Fatalf("got %x %x %d", h, v2, typ)
			}
		})
	}
}
