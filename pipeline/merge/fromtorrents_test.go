package merge

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// fromRefused runs merge --from other into a new dataset and checks that
// it is refused as bad input (exit 2, when usage) with the one line
// "merge --from: FILE: want", FILE the other dataset's newest file that
// glob (under other) matches, and that nothing is committed; with want
// "" it must union.
func fromRefused(t *testing.T, other, glob, want string, usage bool, max int64) {
	t.Helper()
	dir := makeDataset(t, nil)
	before, digests := datasettest.Snapshot(t, dir), datasettest.Digests(t, dir)
	o := DefaultOptions()
	o.Data, o.From, o.Now = dir, other, tm(t0+2*hour)
	if max > 0 {
		o.MaxMetadataSize = max
	}
	_, err := Run(context.Background(), o)
	if want == "" {
		if err != nil {
			t.Fatalf("merge --from: %v", err)
		}
		return
	}
	files, _ := filepath.Glob(filepath.Join(other, glob)) // sorted: the newest snapshot's last
	if len(files) == 0 {
		t.Fatalf("no file of the other dataset matches %s", glob)
	}
	want = "merge --from: " + files[len(files)-1] + ": " + want
	if err == nil || err.Error() != want || (exitcode.Of(err) == exitcode.Usage) != usage {
		t.Fatalf("err = %v (exit %d)\nwant %s (bad input: %v)", err, exitcode.Of(err), want, usage)
	}
	if datasettest.Snapshot(t, dir) != before || datasettest.Digests(t, dir) != digests {
		t.Fatal("the refused union changed the dataset")
	}
}

// TestFromTorrentFields: the other dataset's torrents are checked by row
// as results are: served_by within its bound, a name or a file's path
// within twice --max-metadata-size (their page's bound).
func TestFromTorrentFields(t *testing.T) {
	const max = 64 << 10
	info, h := torrentInfo("fields")
	hex := schema.Hex(h)
	host := func(n int) string { return strings.Repeat("h", n-5) + ":6881" }
	tor := func(f func(*schema.Torrent)) schema.Torrent {
		tr := schema.Torrent{InfoHash: h, HashType: 1, FetchedAt: t0 + hour, ServedBy: "127.0.0.1:1", Meta: schema.Meta{InfoBytes: info}}
		f(&tr)
		return tr
	}
	big := strings.Repeat("n", 2*max+1)
	tests := []struct {
		name string
		row  schema.Torrent
		want string
	}{
		{"served_by at the bound", tor(func(tr *schema.Torrent) { tr.ServedBy = host(262) }), ""},
		{"served_by a byte over", tor(func(tr *schema.Torrent) { tr.ServedBy = host(263) }),
			"row 1: " + hex + ": served_by of 263 bytes, over its bound of 262 bytes"},
		{"name at twice the cap", tor(func(tr *schema.Torrent) { tr.Name = new(big[1:]) }), ""},
		{"name a byte over twice the cap", tor(func(tr *schema.Torrent) { tr.Name = new(big) }),
			fmt.Sprintf("row 1: %s: name of %d bytes, over %d bytes (twice --max-metadata-size %d) (%s)", hex, 2*max+1, 2*max, max, fromHint)},
		{"name_raw a byte over", tor(func(tr *schema.Torrent) { tr.NameRaw = []byte(big) }),
			fmt.Sprintf("row 1: %s: name_raw of %d bytes, over %d bytes (twice --max-metadata-size %d) (%s)", hex, 2*max+1, 2*max, max, fromHint)},
		{"a path a byte over", tor(func(tr *schema.Torrent) {
			tr.Files = []schema.File{{Path: "a", PathRaw: []byte("a")}, {Path: big, PathRaw: []byte("b")}}
		}), fmt.Sprintf("row 1: %s: files[1].path of %d bytes, over %d bytes (twice --max-metadata-size %d) (%s)", hex, 2*max+1, 2*max, max, fromHint)},
		{"a raw path a byte over", tor(func(tr *schema.Torrent) { tr.Files = []schema.File{{Path: "a", PathRaw: []byte(big)}} }),
			fmt.Sprintf("row 1: %s: files[0].path_raw of %d bytes, over %d bytes (twice --max-metadata-size %d) (%s)", hex, 2*max+1, 2*max, max, fromHint)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			other := makeDataset(t, []schema.State{newHash(h, t0)})
			addTables(t, other, []schema.Torrent{tt.row}, nil, nil, nil)
			fromRefused(t, other, "torrents/v/*/prefix="+hex[:2]+"/*.parquet", tt.want, true, max)
		})
	}
}

// TestFromTorrentHash: the other dataset's torrents are verified as
// results are: info_bytes must hash to info_hash as hash_type says. A
// dictionary under another hash is refused, naming the row, and nothing
// is merged.
func TestFromTorrentHash(t *testing.T) {
	info, h := torrentInfo("hashed")
	other, _ := torrentInfo("another")
	v2info := v2TorrentInfo("hashed2")
	v2sum := sha256.Sum256(v2info)
	h2 := schema.Hash(v2sum[:20])
	tests := []struct {
		name string
		row  schema.Torrent
		want string
	}{
		{"v1, its own dictionary", schema.Torrent{InfoHash: h, HashType: 1, Meta: schema.Meta{InfoBytes: info}}, ""},
		{"v1, another dictionary", schema.Torrent{InfoHash: h, HashType: 1, Meta: schema.Meta{InfoBytes: other}},
			"row 1: " + schema.Hex(h) + ": info_bytes do not hash to its info_hash (hash_type 1): a torrent fetch did not verify; nothing is merged"},
		{"v2, its own dictionary", schema.Torrent{InfoHash: h2, HashType: 2, Meta: schema.Meta{InfoBytes: v2info}}, ""},
		{"v2, its SHA-1 taken for its hash", schema.Torrent{InfoHash: sha1.Sum(v2info), HashType: 2, Meta: schema.Meta{InfoBytes: v2info}},
			"row 1: " + schema.Hex(sha1.Sum(v2info)) + ": info_bytes do not hash to its info_hash (hash_type 2): a torrent fetch did not verify; nothing is merged"},
		{"v1, its SHA-256 taken for its hash", schema.Torrent{InfoHash: schema.Hash(sha256Prefix(info)), HashType: 1, Meta: schema.Meta{InfoBytes: info}},
			"row 1: " + schema.Hex(sha256Prefix(info)) + ": info_bytes do not hash to its info_hash (hash_type 1): a torrent fetch did not verify; nothing is merged"},
		{"no info_bytes", schema.Torrent{InfoHash: h, HashType: 1}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.row.FetchedAt, tt.row.ServedBy = t0+hour, "127.0.0.1:1"
			hex := schema.Hex(tt.row.InfoHash)
			other := makeDataset(t, []schema.State{newHash(tt.row.InfoHash, t0)})
			addTables(t, other, []schema.Torrent{tt.row}, nil, nil, nil)
			fromRefused(t, other, "torrents/v/*/prefix="+hex[:2]+"/*.parquet", tt.want, true, 0)
		})
	}
}

// sha256Prefix is the first 20 bytes of b's SHA-256.
func sha256Prefix(b []byte) schema.Hash {
	sum := sha256.Sum256(b)
	return schema.Hash(sum[:20])
}
