package merge

import (
	"bytes"
	"crypto/sha1"
	"log/slog"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/infodict"
	"github.com/infohash/infohash/formats/schema"
)

// TestPadFilesNotStored: merge stores a torrent's columns without its
// BEP 47 pad files (infodict.Parse), whichever way the results row
// counted them, and warns of columns that disagree with info_bytes only
// when they are neither: a row of a fetch that counted the pads, as every
// fetch did before, reads as it always did, without the warning.
func TestPadFilesNotStored(t *testing.T) {
	info := []byte("d5:filesld6:lengthi100e4:pathl1:aeed4:attr1:p6:lengthi16284e4:pathl4:.pad5:16284eed6:lengthi200e4:pathl1:bee" +
		"e4:name1:d12:piece lengthi16384e6:pieces40:" + string(bytes.Repeat([]byte{'p'}, 40)) + "e")
	h := schema.Hash(sha1.Sum(info))
	withPads, err := infodict.ParseWithPads(info)
	if err != nil {
		t.Fatal(err)
	}
	without, err := infodict.Parse(info)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		meta schema.Meta
		warn bool
	}{
		{"pads counted, as an older fetch wrote", withPads, false},
		{"pads left out, as fetch writes", without, false},
		{"a forged file count", func() schema.Meta { m := without; m.FileCount = new(int32(7)); return m }(), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := makeDataset(t, []schema.State{newHash(h, t0)})
			j := planJobs(t, dir, t0, 1)[0]
			r := success(j, info, t0+minute)
			r.ResultMeta = schema.OKMeta(tt.meta)
			var log bytes.Buffer
			defer slog.SetDefault(slog.Default())
			slog.SetDefault(slog.New(slog.NewTextHandler(&log, nil)))
			runMerge(t, dir, t0+2*minute, writeResults(t, []schema.Result{r}))
			if warned := bytes.Contains(log.Bytes(), []byte("disagree")); warned != tt.warn {
				t.Errorf("warned that columns disagree: %v, want %v:\n%s", warned, tt.warn, log.String())
			}
			tor := readTable[schema.Torrent](t, dir, dataset.TableTorrents)
			if len(tor) != 1 || *tor[0].FileCount != 2 || *tor[0].TotalSize != 300 || len(tor[0].Files) != 2 {
				t.Fatalf("torrents %+v, want one with 2 files of 300 bytes (no pad file)", tor)
			}
		})
	}
}
