package merge

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
)

// TestTorrentsPartitionCompacts merges the metadata of one partition's
// hashes one merge at a time, past maxTorrentFiles: the merge that would
// add a file too many compacts the partition's files and its new row into
// one file, which keeps every torrent once, bytes intact, and matches its
// manifest entry.
func TestTorrentsPartitionCompacts(t *testing.T) {
	const n = maxTorrentFiles + 2
	var infos [][]byte
	var hashes []schema.Hash
	for i := 0; len(hashes) < n; i++ {
		info, h := torrentInfo(fmt.Sprintf("file-%d.iso", i))
		if len(hashes) > 0 && h[0] != hashes[0][0] {
			continue // one partition: the first hash's
		}
		infos, hashes = append(infos, info), append(hashes, h)
	}
	var states []schema.State
	for _, h := range hashes {
		states = append(states, newHash(h, t0))
	}
	dir := makeDataset(t, states)
	jobs := map[schema.Hash]schema.Job{}
	for _, j := range planJobs(t, dir, t0+hour, n) {
		jobs[j.InfoHash] = j
	}
	if len(jobs) != n {
		t.Fatalf("planned %d jobs, want %d", len(jobs), n)
	}
	part := filepath.Join(dir, dataset.TableTorrents, "current", fmt.Sprintf("prefix=%02x", hashes[0][0]))
	for i, h := range hashes {
		at := t0 + hour + int64(i+1)*minute
		runMerge(t, dir, at+minute, writeResults(t, []schema.Result{success(jobs[h], infos[i], at)}))
		files, err := filepath.Glob(filepath.Join(part, "*.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		want := i + 1 // a file per merge, until a 17th would be one too many
		if i >= maxTorrentFiles {
			want = i + 1 - maxTorrentFiles
		}
		if len(files) != want {
			t.Fatalf("after merge %d the partition has %d files, want %d", i+1, len(files), want)
		}
	}
	got := map[schema.Hash][]byte{}
	for _, tor := range readTable[schema.Torrent](t, dir, dataset.TableTorrents) {
		if _, dup := got[tor.InfoHash]; dup {
			t.Fatalf("%x stored twice", tor.InfoHash)
		}
		got[tor.InfoHash] = tor.InfoBytes
	}
	for i, h := range hashes {
		if string(got[h]) != string(infos[i]) {
			t.Fatalf("torrent %x: stored %q, want %q", h, got[h], infos[i])
		}
	}
	if len(got) != n {
		t.Fatalf("%d torrents stored, want %d", len(got), n)
	}
	d, m := datasettest.OpenCurrent(t, dir)
	defer d.Close()
	if rows := m.Table(dataset.TableTorrents).Rows(); rows != n {
		t.Fatalf("the manifest counts %d torrent rows, want %d", rows, n)
	}
	v, err := dataset.Verify(context.Background(), d.Files(m), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Problems) != 0 {
		t.Fatalf("verify: %v", v.Problems)
	}
}
