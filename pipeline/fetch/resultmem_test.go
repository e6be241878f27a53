package fetch

import (
	"crypto/sha1"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// bigResult is an ok result for job i with size bytes of pseudo-random
// info dictionary (the same on every run).
func bigResult(i, size int) schema.Result {
	info := make([]byte, size)
	rand.NewChaCha8([32]byte{byte(i), byte(i >> 8)}).Read(info)
	info[0] = 'd'
	return schema.Result{InfoHash: sha1.Sum(info), HashType: schema.HashV1, Outcome: schema.OutcomeOK,
		AttemptedAt: 1700000000000 + int64(i), MetadataSize: int64(size), ResultMeta: schema.ResultMeta{InfoBytes: info}}
}

// heapPeak samples HeapInuse every millisecond (and at each call of the
// returned sample) until stop, which returns the largest value seen above
// the heap in use when heapPeak was called.
func heapPeak() (sample func(), stop func() uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var mu sync.Mutex
	peak := base
	sample = func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		mu.Lock()
		peak = max(peak, ms.HeapInuse)
		mu.Unlock()
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				sample()
			}
		}
	})
	return sample, func() uint64 {
		close(done)
		wg.Wait()
		sample()
		return peak - base
	}
}

// TestLargeMetadataMemory writes 60 results with 4 MiB info dictionaries
// through fetch's result writer (writeResults batching into the Parquet
// output Run creates), as fast as it takes them. It held them all at once
// and more: 3 GiB of heap at the peak, and a file 5x their size. Now
// about 250 MiB: a 16 MiB batch, a 64 MiB row group, and garbage the GC
// (pinned at GOGC=100 here) has not collected yet.
func TestLargeMetadataMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 240 MiB of metadata")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	const n, size = 60, 4 << 20
	path := filepath.Join(t.TempDir(), "results.parquet")
	out, err := createResults(Options{Output: path})
	if err != nil {
		t.Fatal(err)
	}
	sample, stop := heapPeak()
	results := make(chan schema.Result)
	done := make(chan error, 1)
	go func() { done <- writeResults(results, out, func(_ []schema.Result, err error) error { return err }) }()
	for i := range n {
		results <- bigResult(i, size)
		sample()
	}
	close(results)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	peak := stop()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d x %d MiB: peak heap %d MiB above the start, file %.2fx the metadata", n, size>>20, peak>>20, float64(st.Size())/(n*size))
	if peak > 512<<20 {
		t.Errorf("peak heap %d MiB, want under 512 MiB", peak>>20)
	}
	if st.Size() > n*size*13/10 {
		t.Errorf("file of %d bytes for %d bytes of metadata", st.Size(), n*size)
	}
}

// bytesSink records the info dictionary bytes of each Write.
type bytesSink struct{ writes []int }

func (s *bytesSink) Write(rs []schema.Result) error {
	n := 0
	for i := range rs {
		n += len(rs[i].InfoBytes)
	}
	s.writes = append(s.writes, n)
	return nil
}

// TestWriteResultsBatchBytes: the batches writeResults hands the output
// end at resultBatchBytes of info dictionaries, not only at 256 results
// or a second: it held every result of a fast run of large metadata (256
// of 10 MiB would be 2.5 GiB), and gave an Arrow output one record batch
// of them all.
func TestWriteResultsBatchBytes(t *testing.T) {
	const n, size = 40, 1 << 20
	info := make([]byte, size)
	results := make(chan schema.Result, n)
	for i := range n {
		results <- schema.Result{InfoHash: schema.Hash{byte(i)}, Outcome: schema.OutcomeOK, ResultMeta: schema.ResultMeta{InfoBytes: info}}
	}
	close(results)
	var sink bytesSink
	if err := writeResults(results, &sink, func(_ []schema.Result, err error) error { return err }); err != nil {
		t.Fatal(err)
	}
	total := 0
	for i, b := range sink.writes {
		if b > resultBatchBytes+size {
			t.Errorf("write %d carried %d bytes of metadata, bound %d", i, b, resultBatchBytes)
		}
		total += b
	}
	if total != n*size {
		t.Errorf("wrote %d bytes of metadata, want %d", total, n*size)
	}
}
