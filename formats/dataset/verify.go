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
	"sync"
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

// VerifyOptions control Verify.
type VerifyOptions struct {
	Workers  int             // files checked at once (default 2)
	Progress func(n int64)   // called with the bytes of each file checked
	Tables   map[string]bool // only these tables (default all)
}

// Verify checks every file of snapshot m (data files and Bloom filters)
// against the size and CRC-32C its manifest recorded when it was written:
// a missing, truncated or altered file is a Problem. The manifest is the
// truth; nothing is changed. Errors other than what a problem describes
// (a cancelled ctx) are returned as the error.
func (d *Dataset) Verify(ctx context.Context, m *Manifest, o VerifyOptions) (VerifyResult, error) {
	type job struct {
		table, path string
		f           FileInfo
	}
	var jobs []job
	for name, t := range m.Tables {
		if o.Tables != nil && !o.Tables[name] {
			continue
		}
		for key, files := range t.Partitions {
			for _, f := range files {
				jobs = append(jobs, job{name, d.FilePath(t, key, f), f})
			}
		}
		for _, f := range t.Blooms {
			jobs = append(jobs, job{name, d.Path(t.BloomPath(f)), f})
		}
	}
	sort.Slice(jobs, func(i, j int) bool { return jobs[i].path < jobs[j].path })
	var (
		res  VerifyResult
		mu   sync.Mutex
		wg   sync.WaitGroup
		next = make(chan job)
	)
	workers := max(o.Workers, 1)
	if o.Workers == 0 {
		workers = 2
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 1<<20)
			for j := range next {
				what := checkFile(j.path, j.f, buf)
				mu.Lock()
				res.Files++
				res.Bytes += j.f.Size
				if what != "" {
					res.Problems = append(res.Problems, Problem{Table: j.table, Path: j.path, What: what})
				}
				mu.Unlock()
				if o.Progress != nil {
					o.Progress(j.f.Size)
				}
			}
		}()
	}
	for _, j := range jobs {
		if ctx.Err() != nil {
			break
		}
		next <- j
	}
	close(next)
	wg.Wait()
	sort.Slice(res.Problems, func(i, j int) bool { return res.Problems[i].Path < res.Problems[j].Path })
	return res, ctx.Err()
}

// checkFile returns what is wrong with the file at path against f ("" if
// nothing).
func checkFile(path string, f FileInfo, buf []byte) string {
	fh, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "missing"
	}
	if err != nil {
		return err.Error()
	}
	defer fh.Close()
	h := crc32.New(castagnoli)
	n, err := io.CopyBuffer(struct{ io.Writer }{h}, struct{ io.Reader }{fh}, buf)
	switch {
	case err != nil:
		return fmt.Sprintf("reading: %v", err)
	case n != f.Size:
		return fmt.Sprintf("%d bytes, the manifest says %d", n, f.Size)
	case h.Sum32() != f.CRC32C:
		return fmt.Sprintf("CRC-32C %08x, the manifest says %08x (the content changed)", h.Sum32(), f.CRC32C)
	}
	return ""
}
