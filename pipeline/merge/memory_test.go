package merge

import (
	"crypto/sha1"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// TestMergeHeapBelowMetadata merges 128 MiB of metadata (512 torrents of
// 256 KiB, all over the partitions) while it samples the live heap. The
// rows merge holds while it applies them carry no metadata, which goes to
// a spill file and is read back a torrent at a time, and the writers
// share their zstd encoders: the live heap must grow by less than half
// the metadata. When merge kept the metadata in its rows it grew by all
// of it and more (882 MiB). The live heap (as of the last collection) is
// sampled rather than the heap: the collector lets the heap grow to twice
// what is live, and the writers' fixed buffers (a zstd encoder's 8 MiB
// history per worker, parquet-go's page buffers) come to some 35 MiB
// live whatever the metadata.
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
	peak := base
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			peak = max(peak, liveHeap())
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	st := runMerge(t, dir, t0+2*hour, path)
	close(stop)
	<-done
	if st.Stored != n || st.Torrents != n {
		t.Fatalf("stored %d results as %d torrents, want %d", st.Stored, st.Torrents, n)
	}
	grew, meta := int64(peak)-int64(base), int64(n*size)
	t.Logf("live heap grew by %d MiB at most (from %d MiB) for %d MiB of metadata", grew>>20, base>>20, meta>>20)
	if grew > meta/2 {
		t.Errorf("merge's live heap grew by %d MiB for %d MiB of metadata: want under half of it", grew>>20, meta>>20)
	}
	d, err := dataset.OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := d.Current()
	if err != nil {
		t.Fatal(err)
	}
	if rows := m.Table(dataset.TableTorrents).Rows(); rows != n {
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
