package merge

import (
	"errors"
	"reflect"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestMetaCodecRoundTrip: decodeMeta gives back what appendMeta
// encoded, nil slices and pointers as nil, empty slices as empty and
// pointers to zero as zero (a torrents file is written from them: a
// known empty name or size of 0 must not become null).
func TestMetaCodecRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		m    schema.Meta
	}{
		{"zero", schema.Meta{}},
		{"empty slices", schema.Meta{NameRaw: []byte{}, Files: []schema.File{}, InfoBytes: []byte{}}},
		{"full", schema.Meta{Name: new("x\uFFFD"), NameRaw: []byte("x\xff"), NameUTF8Valid: true, TotalSize: new(int64(1 << 40)),
			PieceLength: new(int64(16384)), FileCount: new(int32(3)), Private: true, InfoBytes: []byte("d4:name1:xe"),
			Files: []schema.File{{Path: "a/b", PathRaw: []byte("a/b"), Length: 7}, {Path: "", PathRaw: nil, Length: 0},
				{Path: "c", PathRaw: []byte{}, Length: -1}}}},
		{"known zeros", schema.Meta{Name: new(""), NameRaw: []byte{}, TotalSize: new(int64(0)), PieceLength: new(int64(0)),
			FileCount: new(int32(0)), Files: []schema.File{}, InfoBytes: []byte("de")}},
		{"negative sizes", schema.Meta{TotalSize: new(int64(-5)), PieceLength: new(int64(-1)), FileCount: new(int32(-2))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := appendMeta([]byte("prefix"), &tt.m)
			got, err := decodeMeta(b[len("prefix"):])
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.m) {
				t.Fatalf("decoded\n%#v\nwant\n%#v", got, tt.m)
			}
		})
	}
}

// TestMetaCodecTruncated: every prefix of an encoding, and one with a
// byte too many, is an error, never a panic.
func TestMetaCodecTruncated(t *testing.T) {
	m := schema.Meta{Name: new("n"), NameRaw: []byte("n"), InfoBytes: []byte("info"),
		Files: []schema.File{{Path: "p", PathRaw: []byte("p"), Length: 300}}}
	b := appendMeta(nil, &m)
	for n := range len(b) {
		if _, err := decodeMeta(b[:n]); !errors.Is(err, errMetaCodec) {
			t.Fatalf("%d of %d bytes: err %v, want %v", n, len(b), err, errMetaCodec)
		}
	}
	if _, err := decodeMeta(append(b, 0)); !errors.Is(err, errMetaCodec) {
		t.Fatalf("a byte past the end: err %v, want %v", err, errMetaCodec)
	}
}

// FuzzDecodeMeta: decodeMeta never panics, and what it decodes encodes
// to bytes that decode to the same.
func FuzzDecodeMeta(f *testing.F) {
	f.Add(appendMeta(nil, &schema.Meta{Name: new("n"), Files: []schema.File{{Path: "p"}}, InfoBytes: []byte("i")}))
	f.Add([]byte{0xff, 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeMeta(b)
		if err != nil {
			return
		}
		again, err := decodeMeta(appendMeta(nil, &m))
		if err != nil || !reflect.DeepEqual(again, m) {
			t.Fatalf("re-encoded %#v decodes to %#v, %v", m, again, err)
		}
	})
}
