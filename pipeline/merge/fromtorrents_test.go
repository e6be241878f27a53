package merge

import (
	"context"
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
