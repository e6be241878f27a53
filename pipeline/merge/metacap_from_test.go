package merge

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// TestMaxMetadataSizeFrom: merge --from reads the other dataset's
// torrents within --max-metadata-size too (that dataset may have been
// merged under a larger cap): an info dictionary over it is bad input
// naming the other dataset's file, its row or rows, the size and the
// cap, refused from its page header when the page is over, else by its
// row; nothing is committed. At the cap, or with the cap raised, the
// torrent is unioned.
func TestMaxMetadataSizeFrom(t *testing.T) {
	const max = 64 << 10
	tests := []struct {
		name string
		size int
		max  int64
		want string // the error after "merge --from: FILE: ", "" to be unioned
	}{
		{"at the cap", max, max, ""},
		{"a byte over", max + 1, max, "row 1: %s: info_bytes of 65537 bytes, over --max-metadata-size 65536 (" + fromHint + ")"},
		{"a byte over, the cap raised", max + 1, max + 1, ""},
		{"twice the cap", 2 * max, max, "rows 1-1: a page of info_bytes declares 131"},
		{"twice the cap, the cap raised", 2 * max, 4 * max, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info, h := sizedInfo(t, tt.size, 3)
			other := makeDataset(t, []schema.State{newHash(h, t0)})
			addTables(t, other, []schema.Torrent{{InfoHash: h, HashType: 1, FetchedAt: t0 + hour, ServedBy: "127.0.0.1:1",
				Meta: schema.Meta{InfoBytes: info}}}, nil, nil, nil)
			dir := makeDataset(t, nil)
			before, digests := datasettest.Snapshot(t, dir), datasettest.Digests(t, dir)
			o := DefaultOptions()
			o.Data, o.From, o.Now, o.MaxMetadataSize = dir, other, tm(t0+2*hour), tt.max
			st, err := Run(context.Background(), o)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("merge --from: %v", err)
				}
				if st.Union.TorrentsAdded != 1 || len(readTable[schema.Torrent](t, dir, dataset.TableTorrents)) != 1 {
					t.Fatalf("unioned %d torrents, want 1", st.Union.TorrentsAdded)
				}
				return
			}
			files, _ := filepath.Glob(filepath.Join(other, "torrents", "v", "*", "prefix="+schema.Hex(h)[:2], "*.parquet"))
			if len(files) != 1 {
				t.Fatalf("the other dataset's torrents files: %v", files)
			}
			want := "merge --from: " + files[0] + ": " + tt.want
			if strings.Contains(want, "%s") {
				want = fmt.Sprintf(want, schema.Hex(h))
			}
			if exitcode.Of(err) != exitcode.Usage || err == nil || !strings.HasPrefix(err.Error(), want) ||
				!strings.Contains(err.Error(), "--max-metadata-size 65536") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %v\nwant bad input, one line starting %q, naming the cap", err, want)
			}
			if datasettest.Snapshot(t, dir) != before || datasettest.Digests(t, dir) != digests {
				t.Fatal("the refused union changed the dataset")
			}
		})
	}
}
