package merge

import (
	"bytes"
	"crypto/sha1"
	"encoding"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// bigTorrentInfos returns n info dictionaries of about size bytes each
// (pseudo-random pieces, the same on every run) whose v1 hashes all fall
// in partition prefix: a trailing "salt" entry is counted up until the
// hash does, hashing only the salt past a saved SHA-1 state.
func bigTorrentInfos(t *testing.T, n, size int, prefix byte) ([][]byte, []schema.Hash) {
	t.Helper()
	var infos [][]byte
	var hashes []schema.Hash
	for i := range n {
		pieces := make([]byte, size/20*20)
		rand.NewChaCha8([32]byte{byte(i)}).Read(pieces)
		name := fmt.Sprintf("big-%d.iso", i)
		head := fmt.Appendf(nil, "d6:lengthi%de4:name%d:%s12:piece lengthi16384e6:pieces%d:", len(pieces)/20*16384, len(name), name, len(pieces))
		head = append(head, pieces...)
		h := sha1.New()
		h.Write(head)
		state, err := h.(encoding.BinaryMarshaler).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		for salt := 0; ; salt++ {
			tail := fmt.Appendf(nil, "4:salti%dee", salt)
			if err := h.(encoding.BinaryUnmarshaler).UnmarshalBinary(state); err != nil {
				t.Fatal(err)
			}
			h.Write(tail)
			var sum schema.Hash
			if h.Sum(sum[:0]); sum[0] == prefix {
				infos, hashes = append(infos, append(head, tail...)), append(hashes, sum)
				break
			}
		}
	}
	return infos, hashes
}

// TestLargeTorrentsFile merges 18 fetched torrents of 4 MiB into one
// torrents partition: the file merge writes ends row groups by bytes
// (parquet-go buffers a row group whole: by rows alone, up to 256 Ki
// info dictionaries), and keeps no min/max of info_bytes, which made
// the file five times the metadata.
func TestLargeTorrentsFile(t *testing.T) {
	if testing.Short() {
		t.Skip("merges 72 MiB of metadata")
	}
	const n, size = 18, 4 << 20
	infos, hashes := bigTorrentInfos(t, n, size, 0x42)
	var states []schema.State
	for _, h := range hashes {
		states = append(states, newHash(h, t0))
	}
	dir := makeDataset(t, states)
	var results []schema.Result
	byHash := map[schema.Hash][]byte{}
	for i, h := range hashes {
		byHash[h] = infos[i]
	}
	for _, j := range planJobs(t, dir, t0+hour, n) {
		results = append(results, success(j, byHash[j.InfoHash], t0+hour+minute))
	}
	if len(results) != n {
		t.Fatalf("planned %d jobs, want %d", len(results), n)
	}
	runMerge(t, dir, t0+hour+2*minute, writeResults(t, results))

	files, err := filepath.Glob(filepath.Join(dir, dataset.TableTorrents, "current", "prefix=42", "*.parquet"))
	if err != nil || len(files) != 1 {
		t.Fatalf("torrents partition holds %v (%v), want one file", files, err)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := pf.Schema().Lookup("info_bytes")
	md := pf.Metadata()
	if len(md.RowGroups) < 2 {
		t.Errorf("%d torrents of %d MiB in %d row group(s), want a row group per 64 MiB", n, size>>20, len(md.RowGroups))
	}
	for g, rg := range md.RowGroups {
		if st := rg.Columns[leaf.ColumnIndex].MetaData.Statistics; st.MinValue != nil || st.MaxValue != nil || st.Min != nil || st.Max != nil {
			t.Errorf("row group %d: info_bytes has min/max statistics", g)
		}
	}
	if len(b) > n*size*13/10 {
		t.Errorf("torrents file of %d bytes for %d bytes of metadata", len(b), n*size)
	}
	got := readTable[schema.Torrent](t, dir, dataset.TableTorrents)
	if len(got) != n {
		t.Fatalf("%d torrents stored, want %d", len(got), n)
	}
	for _, tor := range got {
		if !bytes.Equal(tor.InfoBytes, byHash[tor.InfoHash]) {
			t.Fatalf("torrent %x: info_bytes differ", tor.InfoHash)
		}
	}
}
