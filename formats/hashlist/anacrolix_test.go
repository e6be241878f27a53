package hashlist

import (
	"bytes"
	"strings"
	"testing"

	"github.com/anacrolix/torrent/metainfo"

	"github.com/infohash/infohash/formats/schema"
)

// checkAnacrolixMagnet fails t when anacrolix's ParseMagnetV2Uri reads
// from a magnet URI line, that MagnetHashes read as hs, an infohash that
// hs lack: its urn:btih (40 hex or 32 base32 characters) as a v1 hash, its
// urn:btmh (a sha2-256 multihash) as a v2 one of the same 32 bytes. hs
// may hold more (the xt.N topics of BEP 9, which anacrolix does not
// read); a line either refuses is left out.
func checkAnacrolixMagnet(t *testing.T, line string, hs []Hash) {
	t.Helper()
	m, err := metainfo.ParseMagnetV2Uri(strings.TrimSpace(line))
	if err != nil {
		return
	}
	has := func(h schema.Hash, v2 []byte, typ int8) bool {
		for _, x := range hs {
			if x.H == h && x.Type == typ && bytes.Equal(x.V2, v2) {
				return true
			}
		}
		return false
	}
	if m.InfoHash.Ok && !has(schema.Hash(m.InfoHash.Value), nil, schema.HashV1) {
		t.Fatalf("%q: anacrolix reads btih %x, MagnetHashes %+v", line, m.InfoHash.Value, hs)
	}
	if v := m.V2InfoHash.Value; m.V2InfoHash.Ok && !has(schema.Hash(v[:20]), v[:], schema.HashV2) {
		t.Fatalf("%q: anacrolix reads btmh %x, MagnetHashes %+v", line, v, hs)
	}
}

// TestAnacrolixMagnets: anacrolix reads magnet URIs of a v1, a v2 and a
// hybrid torrent as MagnetHashes does, so that checkAnacrolixMagnet
// compares rather than skips.
func TestAnacrolixMagnets(t *testing.T) {
	const hx = "0123456789abcdef0123456789abcdef01234567"
	const v2 = "1220" + "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
	for _, line := range []string{
		"magnet:?xt=urn:btih:" + hx,
		"magnet:?xt=urn:btih:AERUKZ4JVPG66AJDIVTYTK6N54ASGRLH&dn=x",
		"magnet:?xt=urn:btmh:" + v2,
		"magnet:?xt=urn:btih:" + hx + "&xt=urn:btmh:" + v2,
	} {
		m, err := metainfo.ParseMagnetV2Uri(line)
		if err != nil || !m.InfoHash.Ok && !m.V2InfoHash.Ok {
			t.Fatalf("%q: anacrolix reads %+v, %v", line, m, err)
		}
		hs, err := MagnetHashes(line)
		if err != nil {
			t.Fatal(err)
		}
		checkAnacrolixMagnet(t, line, hs)
	}
}
