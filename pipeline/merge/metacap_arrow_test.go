package merge

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/rowio/rowiotest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// compressedStream is rs as an Arrow IPC stream whose buffers are
// compressed with codec ("" for none, "lz4", "zstd"), as pyarrow or
// arrow-go write one when asked: fetch writes them uncompressed.
func compressedStream(t *testing.T, codec string, rs []schema.Result) []byte {
	t.Helper()
	return rowiotest.Recompress(t, codec, resultStream(t, rs))
}

func mergeCappedStdin(dir string, stream []byte, max int64) error {
	o := DefaultOptions()
	o.Data, o.Now, o.Inputs, o.Stdin, o.MaxMetadataSize = dir, tm(t0+2*hour), []string{"-"}, bytes.NewReader(stream), max
	o.Workers = 1
	_, err := Run(context.Background(), o)
	return err
}

// TestMaxMetadataSizeArrow: an Arrow stream on stdin, compressed or not,
// whose record batch declares more info_bytes than its rows could hold
// at the cap is refused before the buffer is allocated or decompressed,
// with the cap's one-line error naming its rows, set aside, nothing
// committed; at the cap it is merged.
func TestMaxMetadataSizeArrow(t *testing.T) {
	const max = 64 << 10
	for _, codec := range []string{"", "lz4", "zstd"} {
		for _, tt := range []struct {
			name string
			size int
			want string // after "merge: stdin: ", "" to be merged
		}{
			{"at the cap", max, ""},
			{"four times the cap", 4 * max, "rows 1-1: a record batch's info_bytes buffer declares 262144 bytes for 1 value, over --max-metadata-size 65536 (" + metaHint + ")"},
		} {
			t.Run(tt.name+"/"+codec, func(t *testing.T) {
				info, h := sizedInfo(t, tt.size, 5)
				stream := compressedStream(t, codec, []schema.Result{sizedResult(t, info, h)})
				dir := makeDataset(t, nil)
				before := datasettest.Snapshot(t, dir)
				err := mergeCappedStdin(dir, stream, max)
				if tt.want == "" {
					if err != nil {
						t.Fatalf("merge: %v", err)
					}
					return
				}
				want := "merge: stdin: " + tt.want
				wantStdinSetAside(t, dir, before, err, want)
			})
		}
	}
}

// TestMaxMetadataSizeArrowAllocations: a zstd-compressed Arrow stream of
// one info dictionary of 64 MiB (a stream of 13 KB) is refused under the
// default cap having allocated a small part of it: its buffer is refused
// from the uncompressed length it declares. Without that, merge
// allocated 141 MiB before the row check refused it (the buffer
// decompressed, then the row's copy of it).
func TestMaxMetadataSizeArrowAllocations(t *testing.T) {
	const size = 64 << 20
	info, h := sizedInfo(t, size, 9)
	stream := compressedStream(t, "zstd", []schema.Result{sizedResult(t, info, h)})
	info = nil
	dir := makeDataset(t, nil)
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	err := mergeCappedStdin(dir, stream, DefaultMaxMetadataSize)
	runtime.ReadMemStats(&m1)
	alloc := m1.TotalAlloc - m0.TotalAlloc
	t.Logf("merge allocated %.1f MiB for a stream of %d bytes declaring an info dictionary of %d MiB (err: %v)",
		float64(alloc)/(1<<20), len(stream), size>>20, err)
	if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "over --max-metadata-size 10485760") {
		t.Fatalf("err = %v, want bad input over the default cap", err)
	}
	if alloc > size/8 {
		t.Fatalf("merge allocated %d bytes refusing an info dictionary of %d", alloc, size)
	}
}
