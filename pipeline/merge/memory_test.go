package merge

import (
	"context"
	"crypto/sha1"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
)

// TestMergeHeapBelowMetadata merges 128 MiB of metadata (512 torrents of
// 256 KiB, all over the partitions) and measures what merge holds. The
// rows merge holds while it applies them carry no metadata, which goes to
// a spill file and is read back a torrent at a time: the live heap must
// grow by less than half the metadata. When merge kept the metadata in
// its rows it grew by all of it and more (147-159 MiB here). With one
// worker, it does not tell whether workers share their zstd encoders.
//
// The heap is measured at merge's checkpoints (testCheckpoint: the input
// read, and every 8th torrent row written), with one worker, by a
// collection forced there: the one goroutine at work waits in it, so what
// it marks is what merge holds. Sampling /gc/heap/live:bytes while merge
// ran was flaky: merge runs a worker per GOMAXPROCS, each with its writer
// and encoder buffers (grew 18-24 MiB at -cpu 1, 34-42 at 2, 81-103 at 4,
// 126-158 at 8: over the bound from 4 on), and a collection counts what is
// allocated while it marks as live, so on a loaded machine, where the
// collector's threads wait for a CPU and the pacer starts it earlier,
// metadata merge read and dropped meanwhile counted too.
func TestMergeHeapBelowMetadata(t *testing.T) {
	if testing.Short() {
		t.Skip("merges 128 MiB of metadata")
	}
	const n, size = 512, 256 << 10
	dir := makeDataset(t, nil)
	path := manyTorrentsResults(t, n, size)
	runtime.GC() // the rows written are garbage,
	runtime.GC() // and so are the writer's buffers kept in sync.Pools
	base := liveHeap()
	peak, checks, gcs := base, 0, time.Duration(0)
	testCheckpoint = func() {
		// The first (the input read) and every 8th: each torrent is
		// like the others, and a collection takes ~10 ms under -race.
		if checks%8 == 0 {
			began := time.Now()
			runtime.GC()
			peak, gcs = max(peak, liveHeap()), gcs+time.Since(began)
		}
		checks++
	}
	t.Cleanup(func() { testCheckpoint = nil })
	o := DefaultOptions()
	o.Data, o.Now, o.Inputs, o.Workers = dir, tm(t0+2*hour), []string{path}, 1
	st, err := Run(context.Background(), o)
	if err != nil {
		t.Fatalf("merge: %v", err)
	}
	if st.Stored != n || st.Torrents != n {
		t.Fatalf("stored %d results as %d torrents, want %d", st.Stored, st.Torrents, n)
	}
	if checks < n+1 { // every torrent row written, and the input read
		t.Fatalf("merge passed %d checkpoints, want at least %d: the heap was not measured", checks, n+1)
	}
	grew, meta := int64(peak)-int64(base), int64(n*size)
	t.Logf("live heap grew by %d MiB at most (from %d MiB) for %d MiB of metadata; %d collections took %v", grew>>20, base>>20, meta>>20, (checks+7)/8, gcs.Round(time.Millisecond))
	if grew > meta/2 {
		t.Errorf("merge's live heap grew by %d MiB for %d MiB of metadata: want under half of it", grew>>20, meta>>20)
	}
	if rows := datasettest.Current(t, dir).Table(dataset.TableTorrents).Rows(); rows != n {
		t.Fatalf("the manifest counts %d torrent rows, want %d", rows, n)
	}
}

// manyTorrentsResults writes the unleased ok results of n torrents of
// about size bytes of metadata each and returns the file's path. A
// torrent's pieces repeat one 20-byte hash: zstd makes short work of them
// (random pieces made the test several times slower), and in memory they
// take their full size all the same.
func manyTorrentsResults(t *testing.T, n, size int) string {
	t.Helper()
	rng := rand.NewChaCha8([32]byte{'m', 'e', 'm'})
	rs := make([]schema.Result, n)
	for i := range rs {
		pieces := make([]byte, size/20*20)
		rng.Read(pieces[:20])
		for k := 20; k < len(pieces); k *= 2 {
			copy(pieces[k:], pieces[:k])
		}
		name := fmt.Sprintf("many-%d.iso", i)
		info := fmt.Appendf(nil, "d6:lengthi%de4:name%d:%s12:piece lengthi16384e6:pieces%d:", len(pieces)/20*16384, len(name), name, len(pieces))
		info = append(append(info, pieces...), 'e')
		j := schema.Job{InfoHash: sha1.Sum(info), HashType: schema.HashV1, Attempt: 1}
		rs[i] = success(j, info, t0+hour)
	}
	return writeResults(t, rs)
}

// liveHeap is the heap marked live by the last garbage collection.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
