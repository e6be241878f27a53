package export

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anacrolix/torrent/bencode"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/dedup"
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
		want string // "": no magnet (ok false)
	}{
		{"v2 torrent", &schema.Torrent{InfoHash: v2Key, HashType: schema.HashV2, Meta: schema.Meta{Name: new("v2 only"), InfoBytes: v2Info}},
			btmh + "&dn=v2%20only"},
		{"v2 state", &schema.State{InfoHash: v2Key, HashType: schema.HashV2, InfoHashV2: full[:]}, btmh},
		{"v2 catalog", &schema.Catalog{InfoHash: v2Key, HashType: schema.HashV2, InfoHashV2: full[:], Name: new("v2 only")},
			btmh + "&dn=v2%20only"},
		{"v1 torrent", &schema.Torrent{InfoHash: v1Key, HashType: schema.HashV1, Meta: schema.Meta{Name: new("v1"), InfoBytes: v1Info}},
			"magnet:?xt=urn:btih:" + hex.EncodeToString(v1Key[:]) + "&dn=v1"},
		{"hybrid torrent, v1 key", &schema.Torrent{InfoHash: hybridKey, HashType: schema.HashV1, Meta: schema.Meta{Name: new("hybrid"), InfoBytes: hybridInfo}},
			"magnet:?xt=urn:btih:" + hex.EncodeToString(hybridKey[:]) + "&dn=hybrid"},
		{"empty name", &schema.Torrent{InfoHash: v1Key, HashType: schema.HashV1, Meta: schema.Meta{Name: new(""), InfoBytes: v1Info}},
			"magnet:?xt=urn:btih:" + hex.EncodeToString(v1Key[:])},
		// A v2 hash known only by its 20-byte DHT key has no magnet.
		{"v2 state, full hash unknown", &schema.State{InfoHash: v2Key, HashType: schema.HashV2}, ""},
		{"v2 catalog, full hash unknown", &schema.Catalog{InfoHash: v2Key, HashType: schema.HashV2, Name: new("v2 only")}, ""},
		{"v2 torrent, info not of its key", &schema.Torrent{InfoHash: v1Key, HashType: schema.HashV2, Meta: schema.Meta{Name: new("v1"), InfoBytes: v1Info}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Magnet(tt.row)
			if got != tt.want || ok != (tt.want != "") {
				t.Errorf("got  %q, %v\nwant %q, %v", got, ok, tt.want, tt.want != "")
			}
		})
	}
}

// TestMagnetNameEscaping: dn= percent-encodes the name as a URI query
// value, a space as %20 (it was "+", HTML form encoding, which
// Transmission shows as a "+": it decodes %XX only), and every byte a
// query value cannot carry as it is. Both ways of reading it back give the
// name: %XX only (Transmission, url.PathUnescape) and %XX with "+" as a
// space (libtorrent, Go's url.ParseQuery).
func TestMagnetNameEscaping(t *testing.T) {
	h := schema.Hash{0xab}
	tests := []struct{ name, dn string }{
		{"plain", "plain"},
		{"a b", "a%20b"},
		{"a+b", "a%2Bb"},
		{"a&xt=urn:btih:00#frag", "a%26xt%3Durn%3Abtih%3A00%23frag"},
		{"100% done", "100%25%20done"},
		{"Ünï ç", "%C3%9Cn%C3%AF%20%C3%A7"},
		{"tab\tnl\nnul\x00del\x7f", "tab%09nl%0Anul%00del%7F"},
		{"-._~", "-._~"},
		{"/?:@!$'()*,;", "%2F%3F%3A%40%21%24%27%28%29%2A%2C%3B"},
		{"\xff\xfe not UTF-8", "%FF%FE%20not%20UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.dn, func(t *testing.T) {
			got, ok := Magnet(&schema.Catalog{InfoHash: h, HashType: schema.HashV1, Name: new(tt.name)})
			want := "magnet:?xt=urn:btih:" + schema.Hex(h) + "&dn=" + tt.dn
			if !ok || got != want {
				t.Fatalf("got  %q, %v\nwant %q", got, ok, want)
			}
			raw, _ := strings.CutPrefix(got, "magnet:?")
			q, err := url.ParseQuery(raw)
			if err != nil || len(q) != 2 || q.Get("dn") != tt.name {
				t.Errorf("url.ParseQuery: %q, %v; want dn %q and xt only", q, err, tt.name)
			}
			if pct, err := url.PathUnescape(tt.dn); err != nil || pct != tt.name {
				t.Errorf("%%XX decoding: %q, %v; want %q", pct, err, tt.name)
			}
		})
	}
}

// TestMagnetLeavesOutUnlinkableV2: export --format magnet leaves out a
// hash of hash_type 2 whose full v2 hash is unknown (an observation gave
// only its 20-byte DHT key) and counts it in Stats.UnlinkableV2, not in
// Rows, from the state and the catalog; the other formats keep its row.
// It wrote magnet:?xt=urn:btih:<the truncation>, which a client checks
// as a SHA-1 and fails.
func TestMagnetLeavesOutUnlinkableV2(t *testing.T) {
	dir := t.TempDir()
	v1 := schema.Hash{0x01, 1}
	full := sha256.Sum256([]byte("full"))
	full[0] = 0x80
	known, truncated := schema.Hash(full[:20]), schema.Hash{0xc0, 2}
	obs := filepath.Join(dir, "obs.parquet")
	w, err := rowio.Create[schema.Observation](obs, nil)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixMilli()
	if err := w.Write([]schema.Observation{
		{InfoHash: v1, HashType: schema.HashV1, ObservedAt: at, Source: schema.SourceImport},
		{InfoHash: known, InfoHashV2: full[:], HashType: schema.HashV2, ObservedAt: at, Source: schema.SourceImport},
		{InfoHash: truncated, HashType: schema.HashV2, ObservedAt: at, Source: schema.SourceImport},
	}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	o := dedup.DefaultOptions()
	o.Data, o.Inputs, o.Now = filepath.Join(dir, "ds"), []string{obs}, time.UnixMilli(at)
	if _, err := dedup.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	want := "magnet:?xt=urn:btih:" + schema.Hex(v1) + "\n" + "magnet:?xt=urn:btmh:1220" + hex.EncodeToString(full[:]) + "\n"
	for _, table := range []string{"state", "catalog"} {
		t.Run(table, func(t *testing.T) {
			var out bytes.Buffer
			eo := DefaultOptions()
			eo.Data, eo.Table, eo.Format, eo.Stdout = o.Data, table, "magnet", &out
			st, err := Run(context.Background(), eo)
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != want {
				t.Errorf("got\n%swant\n%s", out.String(), want)
			}
			if st.Rows != 2 || st.UnlinkableV2 != 1 {
				t.Errorf("rows %d, unlinkable_v2 %d; want 2, 1", st.Rows, st.UnlinkableV2)
			}
			eo.Format, eo.Stdout = "csv", new(bytes.Buffer)
			if st, err := Run(context.Background(), eo); err != nil || st.Rows != 3 || st.UnlinkableV2 != 0 {
				t.Errorf("csv: rows %d, unlinkable_v2 %d, %v; want 3, 0", st.Rows, st.UnlinkableV2, err)
			}
		})
	}
}

// TestAppendMagnet: appendMagnet appends to what b holds exactly what
// Magnet returns, and leaves b as it was for a row no magnet names.
func TestAppendMagnet(t *testing.T) {
	h := schema.Hash{0xab, 19: 0x01}
	v2 := append(h[:], make([]byte, 12)...)
	name := "a b&c"
	tests := []struct {
		name string
		row  any
	}{
		{"v1 state", &schema.State{InfoHash: h, HashType: schema.HashV1}},
		{"v2 state with its full hash", &schema.State{InfoHash: h, HashType: schema.HashV2, InfoHashV2: v2}},
		{"v2 state without", &schema.State{InfoHash: h, HashType: schema.HashV2}},
		{"catalog with a name", &schema.Catalog{InfoHash: h, HashType: schema.HashV1, Name: &name}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, wantOK := Magnet(tt.row)
			b, ok := appendMagnet([]byte("line\n"), tt.row)
			if ok != wantOK || string(b) != "line\n"+want {
				t.Errorf("appendMagnet = %q, %v; want %q, %v", b, ok, "line\n"+want, wantOK)
			}
		})
	}
}
