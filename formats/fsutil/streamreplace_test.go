package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/fsutil/fsutiltest"
)

// TestReplaceStream: a ReplacingStream leaves the file it replaces as it
// was (bytes, mode, a symbolic link to it) until Start, which renames the
// stream over the link's target; Discard leaves the file and nothing
// beside it; a file whose lock another holder has is ErrStreamHeld; no
// file at all is fs.ErrNotExist. With and without O_TMPFILE.
func TestReplaceStream(t *testing.T) {
	for _, unnamed := range []bool{true, false} {
		for _, tc := range []struct {
			name  string
			link  bool // the output is a symbolic link to the file
			start bool // Start, or Discard
		}{
			{"started", false, true}, {"discarded", false, false},
			{"started through a link", true, true}, {"discarded through a link", true, false},
		} {
			t.Run(fmt.Sprintf("%s, O_TMPFILE %v", tc.name, unnamed), func(t *testing.T) {
				defer func(was bool) { unnamedFirst = was }(unnamedFirst)
				unnamedFirst = unnamed
				dir := t.TempDir()
				file, out := filepath.Join(dir, "obs.arrows"), filepath.Join(dir, "obs.arrows")
				if err := os.WriteFile(file, []byte("old"), 0o640); err != nil {
					t.Fatal(err)
				}
				if tc.link {
					out = filepath.Join(dir, "link.arrows")
					if err := os.Symlink("obs.arrows", out); err != nil {
						t.Fatal(err)
					}
				}
				r, err := ReplaceStream(out, 0)
				if err != nil {
					t.Fatal(err)
				}
				if r.Name() != out || FileOf(r) == nil {
					t.Errorf("the stream is named %q (file %v), want %q and its file", r.Name(), FileOf(r), out)
				}
				if _, busy := Writing(out); !busy {
					t.Errorf("%s is not locked while its replacement is written", out)
				}
				if _, err := r.Write([]byte("new")); err != nil {
					t.Fatal(err)
				}
				if b, _ := os.ReadFile(out); string(b) != "old" {
					t.Errorf("%s before Start: %q, want %q", out, b, "old")
				}
				want := "old"
				if tc.start {
					if err := r.Start(); err != nil {
						t.Fatal(err)
					}
					if _, err := r.Write([]byte("er")); err != nil {
						t.Fatal(err)
					}
					want = "newer"
					if _, busy := Writing(out); !busy {
						t.Errorf("%s is not locked once the stream replaced it", out)
					}
				} else {
					r.Discard()
				}
				if err := r.Close(); err != nil {
					t.Fatal(err)
				}
				if b, _ := os.ReadFile(out); string(b) != want {
					t.Errorf("%s: %q, want %q", out, b, want)
				}
				if fi, err := os.Lstat(file); err != nil || fi.Mode() != 0o640 {
					t.Errorf("%s: mode %v (%v), want 0640, a regular file", file, fi.Mode(), err)
				}
				names := []string{"obs.arrows"}
				if tc.link {
					names = []string{"link.arrows", "obs.arrows"}
				}
				if got := fsutiltest.Names(t, dir); !slices.Equal(got, names) {
					t.Errorf("%s holds %q, want %q", dir, got, names)
				}
			})
		}
	}
	t.Run("held", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "obs.arrows")
		if err := os.WriteFile(out, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := ReplaceStream(out, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		defer func(was time.Duration) { holdRetry = was }(holdRetry)
		holdRetry = 0
		if _, err := ReplaceStream(out, 0); !errors.Is(err, ErrStreamHeld) {
			t.Errorf("a second ReplaceStream of %s: %v, want ErrStreamHeld", out, err)
		}
	})
	t.Run("missing", func(t *testing.T) {
		if _, err := ReplaceStream(filepath.Join(t.TempDir(), "none.arrows"), 0); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("ReplaceStream of no file: %v, want fs.ErrNotExist", err)
		}
	})
}
