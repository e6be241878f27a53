package dataset

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/infohash/infohash/formats/rowio"
)

// Problem is a file of a snapshot that does not match its manifest.
type Problem struct {
	Table string `json:"table"`
	Path  string `json:"path"`
	What  string `json:"problem"`
}

func (p Problem) String() string { return fmt.Sprintf("%s: %s: %s", p.Table, p.Path, p.What) }

// VerifyResult sums up Verify.
type VerifyResult struct {
	Files    int       `json:"files"`
	Bytes    int64     `json:"bytes"`
	Problems []Problem `json:"problems"`
}

// SnapshotFile is one file of a snapshot with what its manifest says of it.
type SnapshotFile struct {
	Table string
	Path  string
	Info  FileInfo
}

// Files lists every file of snapshot m, data files and Bloom filters, in
// path order.
func (d *Dataset) Files(m *Manifest) []SnapshotFile {
	var out []SnapshotFile
	for name, t := range m.Tables {
		for key, files := range t.Partitions {
			for _, f := range files {
				out = append(out, SnapshotFile{name, d.FilePath(t, key, f), f})
			}
		}
		for _, f := range t.Blooms {
			out = append(out, SnapshotFile{name, d.Path(t.BloomPath(f)), f})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Verify checks files (from Files) against the size and CRC-32C their
// manifest recorded when they were written, and a data file's footer
// against its footer checksum (FileInfo.Footer), two at a time: a
// missing, truncated or altered file is a Problem. The manifest is the truth;
// nothing is changed. progress (if not nil) gets the bytes of each file
// checked. The error is ctx's, if it ends first.
func Verify(ctx context.Context, files []SnapshotFile, progress func(n int64)) (VerifyResult, error) {
	var (
		res  VerifyResult
		mu   sync.Mutex
		wg   sync.WaitGroup
		next = make(chan SnapshotFile)
	)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 1<<20)
			for f := range next {
				what := checkFile(f.Path, f.Info, buf)
				mu.Lock()
				res.Files++
				res.Bytes += f.Info.Size
				if what != "" {
					res.Problems = append(res.Problems, Problem{Table: f.Table, Path: f.Path, What: what})
				}
				mu.Unlock()
				if progress != nil {
					progress(f.Info.Size)
				}
			}
		}()
	}
	for _, f := range files {
		if ctx.Err() != nil {
			break
		}
		next <- f
	}
	close(next)
	wg.Wait()
	sort.Slice(res.Problems, func(i, j int) bool { return res.Problems[i].Path < res.Problems[j].Path })
	return res, ctx.Err()
}

// problemMissing is a Problem's What for a file that is not there.
const problemMissing = "missing"

// checkFile returns what is wrong with the file at path against f ("" if
// nothing).
func checkFile(path string, f FileInfo, buf []byte) string {
	fh, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return problemMissing
	}
	if err != nil {
		return err.Error()
	}
	defer fh.Close()
	n, crc, err := crcOf(fh, buf)
	switch {
	case err != nil:
		return fmt.Sprintf("reading: %v", err)
	case n != f.Size:
		return fmt.Sprintf("%d bytes, the manifest says %d", n, f.Size)
	}
	var what []string
	if crc != f.CRC32C {
		what = append(what, fmt.Sprintf("CRC-32C %08x, the manifest says %08x (the content changed)", crc, f.CRC32C))
	}
	// The footer checksum, which readers check, is reported too: with the
	// file intact, a mismatch is a damaged record of it, which would stop
	// every reader all the same.
	if _, err := f.Footer().Check(fh, n, path); err != nil {
		if fe, ok := errors.AsType[*rowio.FooterError](err); ok {
			what = append(what, fe.What)
		} else {
			what = append(what, err.Error())
		}
	}
	return strings.Join(what, "; ")
}

// CheckBytes reports how the content b of a file differs from what the
// manifest says of it (f), or nil. Small files read whole (Bloom filters)
// are checked with it before they are trusted.
func CheckBytes(b []byte, f FileInfo) error {
	if int64(len(b)) != f.Size {
		return fmt.Errorf("%d bytes, the manifest says %d", len(b), f.Size)
	}
	if crc := crc32.Checksum(b, castagnoli); crc != f.CRC32C {
		return fmt.Errorf("CRC-32C %08x, the manifest says %08x (the content changed)", crc, f.CRC32C)
	}
	return nil
}

// crcOf reads r to its end, through buf (nil: io.Copy's), and returns its
// size and CRC-32C (Castagnoli), as manifests record them.
func crcOf(r io.Reader, buf []byte) (int64, uint32, error) {
	h := crc32.New(castagnoli)
	n, err := io.CopyBuffer(struct{ io.Writer }{h}, struct{ io.Reader }{r}, buf)
	return n, h.Sum32(), err
}
