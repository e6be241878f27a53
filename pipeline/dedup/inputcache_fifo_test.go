package dedup

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/fsutil/fsutiltest"
)

// TestInputCacheNotRegular: a FIFO or directory at DIR/input-cache is no
// cache: dedup ignores it (reads its inputs again), leaves it as it is,
// and is not held up. A FIFO there blocked every dedup for good.
func TestInputCacheNotRegular(t *testing.T) {
	shortRacyWindow(t)
	for _, tt := range []struct {
		name string
		mode fs.FileMode
		make func(p string) error
	}{
		{"FIFO", fs.ModeNamedPipe, func(p string) error { return unix.Mkfifo(p, 0o644) }},
		{"directory", fs.ModeDir, func(p string) error { return os.Mkdir(p, 0o755) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ih")
			p := hashList(t, t.TempDir(), "list.txt", 1, 50)
			settle()
			if _, err := run(t, data, nil, p); err != nil {
				t.Fatal(err)
			}
			cache := filepath.Join(data, dataset.InputCacheFile)
			if err := os.Remove(cache); err != nil {
				t.Fatal(err)
			}
			if err := tt.make(cache); err != nil {
				t.Fatal(err)
			}
			var skipped int64
			err := fsutiltest.Unblocked(t, cache, func() error {
				st, err := run(t, data, nil, p)
				skipped = int64(st.InputsSkipped)
				return err
			})
			if err != nil || skipped != 1 {
				t.Fatalf("second run: %d skipped, %v; want the input read again and skipped", skipped, err)
			}
			if fi, err := os.Lstat(cache); err != nil || fi.Mode().Type() != tt.mode {
				t.Fatalf("%s is no longer a %s: %v", cache, tt.name, err)
			}
		})
	}
}
