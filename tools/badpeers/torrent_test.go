package badpeers

import (
	"fmt"
	"testing"

	"github.com/infohash/infohash/formats/infodict"
	"github.com/infohash/infohash/formats/schema"
)

// TestHybridTorrent: a hybrid torrent's two views agree (pad files align
// its v1 files as its file tree's), so that fetch takes it under either
// hash, with its files (pads left out) in the file tree's order.
func TestHybridTorrent(t *testing.T) {
	for _, files := range []int{1, 2, 12} {
		t.Run(fmt.Sprint(files, " files"), func(t *testing.T) {
			tor := NewHybridTorrent(uint64(files), files, 3)
			for _, typ := range []int8{schema.HashV1, schema.HashV2} {
				m, err := infodict.ParseAs(tor.Info, typ)
				if err != nil {
					t.Fatalf("ParseAs(%d): %v", typ, err)
				}
				if int(*m.FileCount) != files {
					t.Errorf("ParseAs(%d): %d files, want %d", typ, *m.FileCount, files)
				}
			}
		})
	}
}
