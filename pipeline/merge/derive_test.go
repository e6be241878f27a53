package merge

import (
	"bytes"
	"crypto/sha1"
	"reflect"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/infodict"
	"github.com/infohash/infohash/formats/schema"
)

// TestMetaDerivedFromInfoBytes: of an ok result merge verifies only that
// info_bytes hash to the infohash, so every other metadata column it
// stores comes from those bytes, whatever the row said: a results file
// rewritten by hand (DuckDB's SELECT * REPLACE ('forged name' AS name,
// 999 AS total_size, true AS private)) stored the forged values beside
// the real file list.
func TestMetaDerivedFromInfoBytes(t *testing.T) {
	info := []byte("d5:filesld6:lengthi1e4:pathl1:a1:beed6:lengthi2e4:pathl2:c\xffeee4:name2:\xff\xfe12:piece lengthi16384e6:pieces20:" +
		strings.Repeat("p", 20) + "e")
	h := schema.Hash(sha1.Sum(info))
	want, err := infodict.Parse(info)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		forge func(m *schema.ResultMeta)
	}{
		{"as fetch wrote it", func(m *schema.ResultMeta) {}},
		{"name, total_size, private", func(m *schema.ResultMeta) {
			m.Name, m.TotalSize, m.Private = new("forged name"), new(int64(999)), new(true)
		}},
		{"name_raw, name_utf8_valid", func(m *schema.ResultMeta) { m.NameRaw, m.NameUTF8Valid = []byte("forged"), new(true) }},
		{"piece_length, file_count", func(m *schema.ResultMeta) { m.PieceLength, m.FileCount = new(int64(1)), new(int32(7)) }},
		{"files", func(m *schema.ResultMeta) {
			m.Files = []schema.File{{Path: "evil.exe", PathRaw: []byte("evil.exe"), Length: 3}}
		}},
		{"a file's path", func(m *schema.ResultMeta) {
			m.Files = append([]schema.File(nil), m.Files...)
			m.Files[1].Path = "other"
		}},
		{"a name that is not UTF-8", func(m *schema.ResultMeta) { m.Name = new("bad\xffname") }},
		{"no columns but info_bytes", func(m *schema.ResultMeta) { *m = schema.ResultMeta{InfoBytes: m.InfoBytes} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := makeDataset(t, []schema.State{newHash(h, t0)})
			j := planJobs(t, dir, t0, 1)[0]
			r := success(j, info, t0+minute)
			r.ResultMeta = schema.OKMeta(want)
			tt.forge(&r.ResultMeta)
			runMerge(t, dir, t0+2*minute, writeResults(t, []schema.Result{r}))
			tor := readTable[schema.Torrent](t, dir, dataset.TableTorrents)
			if len(tor) != 1 || !bytes.Equal(tor[0].InfoBytes, info) {
				t.Fatalf("torrents: %d rows", len(tor))
			}
			got := tor[0].Meta
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("stored %+v\nwant   %+v", got, want)
			}
			if tor[0].NameOr() != "\ufffd" || *tor[0].TotalSize != 3 || tor[0].Private || *tor[0].FileCount != 2 {
				t.Fatalf("stored name %q, total_size %d, private %v, file_count %d", tor[0].NameOr(), *tor[0].TotalSize, tor[0].Private, *tor[0].FileCount)
			}
		})
	}
}
