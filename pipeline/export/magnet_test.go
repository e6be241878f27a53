package export

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/anacrolix/torrent/bencode"

	"github.com/infohash/infohash/formats/schema"
)

// TestMagnetOfV2Torrent: a torrents row of a v2 torrent gives the btmh of
// its full v2 hash, the SHA-256 of its info dictionary, as its state and
// catalog rows do; it gave a btih of the 20-byte truncation, which a
// client checks as a SHA-1 and fails. A v1 torrent, and a hybrid one
// fetched by its v1 key (a v1 row, as in the state), keep their btih.
func TestMagnetOfV2Torrent(t *testing.T) {
	v2Info := bencode.MustMarshal(map[string]any{"meta version": 2, "name": "v2 only", "piece length": 16384,
		"file tree": map[string]any{"a.txt": map[string]any{"": map[string]any{"length": 5, "pieces root": string(make([]byte, 32))}}}})
	hybridInfo := bencode.MustMarshal(map[string]any{"meta version": 2, "name": "hybrid", "piece length": 16384, "length": 5,
		"pieces":    string(make([]byte, 20)),
		"file tree": map[string]any{"hybrid": map[string]any{"": map[string]any{"length": 5, "pieces root": string(make([]byte, 32))}}}})
	full := sha256.Sum256(v2Info)
	v2Key := schema.Hash(full[:20])
	v1Info := bencode.MustMarshal(map[string]any{"name": "v1", "length": 5, "piece length": 16384, "pieces": string(make([]byte, 20))})
	v1Key, hybridKey := schema.Hash(sha1.Sum(v1Info)), schema.Hash(sha1.Sum(hybridInfo))
	btmh := "magnet:?xt=urn:btmh:1220" + hex.EncodeToString(full[:])
	tests := []struct {
		name string
		row  any
		want string
	}{
		{"v2 torrent", &schema.Torrent{InfoHash: v2Key, HashType: schema.HashV2, Meta: schema.Meta{Name: new("v2 only"), InfoBytes: v2Info}},
			btmh + "&dn=v2+only"},
		{"v2 state", &schema.State{InfoHash: v2Key, HashType: schema.HashV2, InfoHashV2: full[:]}, btmh},
		{"v2 catalog", &schema.Catalog{InfoHash: v2Key, HashType: schema.HashV2, InfoHashV2: full[:], Name: new("v2 only")},
			btmh + "&dn=v2+only"},
		{"v1 torrent", &schema.Torrent{InfoHash: v1Key, HashType: schema.HashV1, Meta: schema.Meta{Name: new("v1"), InfoBytes: v1Info}},
			"magnet:?xt=urn:btih:" + hex.EncodeToString(v1Key[:]) + "&dn=v1"},
		{"hybrid torrent, v1 key", &schema.Torrent{InfoHash: hybridKey, HashType: schema.HashV1, Meta: schema.Meta{Name: new("hybrid"), InfoBytes: hybridInfo}},
			"magnet:?xt=urn:btih:" + hex.EncodeToString(hybridKey[:]) + "&dn=hybrid"},
		{"empty name", &schema.Torrent{InfoHash: v1Key, HashType: schema.HashV1, Meta: schema.Meta{Name: new(""), InfoBytes: v1Info}},
			"magnet:?xt=urn:btih:" + hex.EncodeToString(v1Key[:])},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Magnet(tt.row); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
