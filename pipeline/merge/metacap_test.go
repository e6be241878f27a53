package merge

import (
	"bytes"
	"context"
	"crypto/sha1"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/infodict"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// sizedInfo returns a valid v1 info dictionary of exactly size bytes
// (at least 120) and its hash: one piece, and a padding entry of the
// alphabet repeated making up the size.
func sizedInfo(t *testing.T, size int, seed byte) ([]byte, schema.Hash) {
	t.Helper()
	name := fmt.Sprintf("sized-%d.bin", seed)
	head := fmt.Appendf(nil, "d6:lengthi16384e4:name%d:%s12:piece lengthi16384e6:pieces20:%s8:zpadding",
		len(name), name, bytes.Repeat([]byte{seed}, 20))
	for digits := 1; digits <= 10; digits++ {
		pad := size - len(head) - digits - 2 // "N:", the padding, "e"
		if pad < 0 || len(strconv.Itoa(pad)) != digits {
			continue
		}
		b := make([]byte, pad)
		for i := range b {
			b[i] = 'a' + byte(i%26)
		}
		info := append(fmt.Appendf(head, "%d:", pad), b...)
		info = append(info, 'e')
		if len(info) != size {
			t.Fatalf("built %d bytes, want %d", len(info), size)
		}
		return info, sha1.Sum(info)
	}
	t.Fatalf("no info dictionary of %d bytes", size)
	return nil, schema.Hash{}
}

// sizedResults writes the unleased ok results of info dictionaries of
// these sizes, with parquet-go's options opts (fetch's writer's, then
// opts), and returns the file.
func sizedResults(t *testing.T, sizes []int, opts ...parquet.WriterOption) string {
	t.Helper()
	var rs []schema.Result
	for i, size := range sizes {
		info, h := sizedInfo(t, size, byte(i+1))
		rs = append(rs, sizedResult(t, info, h))
	}
	path := t.TempDir() + "/results.parquet"
	w, err := rowio.Create[schema.Result](path, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rs); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// sizedResult is the unleased ok result of info, with the metadata
// columns fetch takes from it.
func sizedResult(t *testing.T, info []byte, h schema.Hash) schema.Result {
	t.Helper()
	m, err := infodict.Parse(info)
	if err != nil {
		t.Fatal(err)
	}
	r := success(schema.Job{InfoHash: h, HashType: schema.HashV1, Attempt: 1}, info, t0+hour)
	r.ResultMeta = schema.OKMeta(m)
	return r
}

func mergeCapped(dir string, max int64, inputs ...string) (Stats, error) {
	o := DefaultOptions()
	o.Data, o.Now, o.Inputs, o.MaxMetadataSize = dir, tm(t0+2*hour), inputs, max
	return Run(context.Background(), o)
}

// TestMaxMetadataSize: a results file holding an info dictionary over
// --max-metadata-size is bad input (exit 2), named with the row or rows,
// the size and the cap, and nothing is committed; at the cap, or with the
// cap raised, it is merged. A page over the cap is refused from its
// header; one a few bytes over passes that check (it leaves room for a
// page's encoding) and its row is refused. A page of many dictionaries,
// each within the cap, is no more than a writer other than fetch may
// write (DuckDB: pages of up to 100 MB).
func TestMaxMetadataSize(t *testing.T) {
	const max = 64 << 10
	tests := []struct {
		name  string
		sizes []int
		opts  []parquet.WriterOption
		max   int64
		want  string // the error's text after "merge: FILE: ", "" to be merged
	}{
		{"at the cap", []int{max}, nil, max, ""},
		{"a byte over", []int{max + 1}, nil, max, "row 1: %s: info_bytes of 65537 bytes, over --max-metadata-size 65536 (" + metaHint + ")"},
		{"a byte over, the cap raised", []int{max + 1}, nil, max + 1, ""},
		{"twice the cap", []int{2 * max}, nil, max, "rows 1-1: a page of info_bytes declares 131"},
		{"twice the cap, the cap raised", []int{2 * max}, nil, 4 * max, ""},
		// fetch's writer ends a page past 256 KiB: the two values share one.
		{"the second row over", []int{1000, 3 * max}, nil, max, "rows 1-2: a page of info_bytes declares 197"},
		{"many in a page, each within the cap", []int{max, max, max, max, max, max}, []parquet.WriterOption{parquet.PageBufferSize(1 << 20)}, max, ""},
		{"many in a page, one over", []int{max, max, max, max + 100}, []parquet.WriterOption{parquet.PageBufferSize(1 << 20)}, max, "row 4: %s: info_bytes of 65636 bytes"},
		{"many in a page, over in all", []int{max, max, 3 * max}, []parquet.WriterOption{parquet.PageBufferSize(1 << 20)}, max, "rows 1-3: a page of info_bytes declares 327"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := makeDataset(t, nil)
			path := sizedResults(t, tt.sizes, tt.opts...)
			before, digests := datasettest.Snapshot(t, dir), datasettest.Digests(t, dir)
			st, err := mergeCapped(dir, tt.max, path)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("merge: %v", err)
				}
				if st.Stored != int64(len(tt.sizes)) || len(readTable[schema.Torrent](t, dir, dataset.TableTorrents)) != len(tt.sizes) {
					t.Fatalf("stored %d torrents, want %d", st.Stored, len(tt.sizes))
				}
				return
			}
			if exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("err = %v, want bad input", err)
			}
			want := "merge: " + path + ": " + tt.want
			if strings.Contains(want, "%s") {
				_, h := sizedInfo(t, tt.sizes[len(tt.sizes)-1], byte(len(tt.sizes)))
				want = fmt.Sprintf(want, schema.Hex(h))
			}
			if !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "--max-metadata-size 65536") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %v\nwant one line starting %q, naming the cap", err, want)
			}
			if datasettest.Snapshot(t, dir) != before || datasettest.Digests(t, dir) != digests {
				t.Fatal("the refused file changed the dataset")
			}
			if _, err := os.Stat(path); err != nil {
				t.Fatalf("the refused file is gone: %v", err)
			}
		})
	}
}

// TestMaxMetadataSizeStdin: an Arrow stream on stdin holding a
// dictionary over the cap is set aside, as other bad stdin is. A byte
// over passes its record batch's check (TestMaxMetadataSizeArrow: it
// leaves room for padding) and is refused by its row.
func TestMaxMetadataSizeStdin(t *testing.T) {
	info, h := sizedInfo(t, 65537, 1)
	stream := resultStream(t, []schema.Result{sizedResult(t, info, h)})
	dir := makeDataset(t, nil)
	before := datasettest.Snapshot(t, dir)
	o := DefaultOptions()
	o.Data, o.Now, o.Inputs, o.Stdin, o.MaxMetadataSize = dir, tm(t0+2*hour), []string{"-"}, bytes.NewReader(stream), 65536
	_, err := Run(context.Background(), o)
	want := "merge: stdin: row 1: " + schema.Hex(h) + ": info_bytes of 65537 bytes, over --max-metadata-size 65536"
	wantStdinSetAside(t, dir, before, err, want)
}

// TestMaxMetadataSizeOption: a cap outside fetch's bounds is refused.
func TestMaxMetadataSizeOption(t *testing.T) {
	for _, n := range []int64{0, -1, MaxMetadataSizeLimit + 1} {
		_, err := mergeCapped(makeDataset(t, nil), n, sizedResults(t, []int{1000}))
		if want := fmt.Sprintf("merge: --max-metadata-size: %d is outside 1-1073741824 (1 GiB)", n); exitcode.Of(err) != exitcode.Usage || err.Error() != want {
			t.Errorf("cap %d: err = %v, want %q", n, err, want)
		}
	}
}

// TestMaxMetadataSizeAllocations: a results file holding one info
// dictionary of 32 MiB (compressible: a file of 33 KB, the hostile case)
// is refused under the default cap (10 MiB) having allocated a small part
// of it: its page is refused from its header, before it is read. Without
// the cap merge allocated 287 MiB to merge it (520 MiB for random bytes:
// the page read, decompressed, the dictionary decoded, the torrents file
// written); refused by the row check alone, 72 MiB.
func TestMaxMetadataSizeAllocations(t *testing.T) {
	const size = 32 << 20
	info, h := sizedInfo(t, size, 7)
	path := writeResults(t, []schema.Result{sizedResult(t, info, h)})
	info = nil
	dir := makeDataset(t, nil)
	o := DefaultOptions()
	o.Data, o.Now, o.Inputs, o.Workers = dir, tm(t0+2*hour), []string{path}, 1
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	_, err := Run(context.Background(), o)
	runtime.ReadMemStats(&m1)
	alloc := m1.TotalAlloc - m0.TotalAlloc
	t.Logf("merge allocated %.1f MiB for an info dictionary of %d MiB (err: %v)", float64(alloc)/(1<<20), size>>20, err)
	if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "over --max-metadata-size 10485760") {
		t.Fatalf("err = %v, want bad input over the default cap", err)
	}
	if alloc > size/4 {
		t.Fatalf("merge allocated %d bytes refusing an info dictionary of %d", alloc, size)
	}
}
