package merge

import (
	"testing"

	"github.com/anacrolix/torrent/bencode"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// TestMergeStoresKnownZeros: an ok result's empty name, size of 0 and
// file count of 0 are stored as those values, whether the result holds
// them (fetch now) or holds nulls for them (written by a fetch that stored
// zero as null): an ok result's metadata is known whole. A missing piece
// length stays null.
func TestMergeStoresKnownZeros(t *testing.T) {
	info := func(n int) ([]byte, schema.Hash) {
		b := bencode.MustMarshal(map[string]any{"name": "", "files": []any{}, "x": n})
		return b, sha1Sum(b)
	}
	newInfo, h1 := info(1)
	oldInfo, h2 := info(2)
	dir := makeDataset(t, []schema.State{newHash(h1, t0), newHash(h2, t0)})
	var results []schema.Result
	for _, j := range planJobs(t, dir, t0+hour, 10) {
		r := success(j, oldInfo, t0+hour+minute)
		r.ResultMeta = schema.ResultMeta{InfoBytes: oldInfo, NameUTF8Valid: new(true), Private: new(false), Files: []schema.File{}} // as an older fetch wrote it
		if j.InfoHash == h1 {
			r.ResultMeta = schema.OKMeta(schema.Meta{Name: new(""), NameRaw: []byte{}, NameUTF8Valid: true, TotalSize: new(int64(0)),
				FileCount: new(int32(0)), Files: []schema.File{}, InfoBytes: newInfo})
		}
		results = append(results, r)
	}
	if len(results) != 2 {
		t.Fatalf("planned %d jobs, want 2", len(results))
	}
	if st := runMerge(t, dir, t0+2*hour, writeResults(t, results)); st.Stored != 2 {
		t.Fatalf("stats %+v", st)
	}
	tor := readTable[schema.Torrent](t, dir, dataset.TableTorrents)
	if len(tor) != 2 {
		t.Fatalf("%d torrents, want 2", len(tor))
	}
	for _, r := range tor {
		m := r.Meta
		if m.Name == nil || *m.Name != "" || m.NameRaw == nil || len(m.NameRaw) != 0 || m.TotalSize == nil || *m.TotalSize != 0 ||
			m.FileCount == nil || *m.FileCount != 0 || m.PieceLength != nil {
			t.Errorf("%x: name %v, name_raw %v (nil %v), total_size %v, file_count %v, piece_length %v; want \"\", empty, 0, 0, null",
				r.InfoHash[:4], m.Name, m.NameRaw, m.NameRaw == nil, m.TotalSize, m.FileCount, m.PieceLength)
		}
	}
}
