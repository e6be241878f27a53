package obsgen

import (
	"bytes"
	"context"
	"testing"

	"github.com/infohash/infohash/formats/fsutil/fsutiltest"
)

// TestWritersKeepOutputs: -o, --text and --ground-truth naming a device
// or FIFO write it in place, and through a symbolic link write its
// target, the link left a link; a directory is refused. --text and
// --ground-truth renamed a temporary file onto the path: a device, a
// FIFO or a link became a regular file (as root, --ground-truth
// /dev/null replaced /dev/null).
func TestWritersKeepOutputs(t *testing.T) {
	c := small(nil)
	_, truth := generate(t, c)
	for _, w := range []struct {
		name  string
		write func(path string) error
		head  string // what the output starts with
	}{
		{"-o", func(p string) error { _, err := WriteParquet(context.Background(), p, c, Native); return err }, "PAR1"},
		{"--text", func(p string) error { _, err := WriteText(context.Background(), p, c, Hex); return err }, ""},
		{"--ground-truth", truth.WriteJSON, "{"},
	} {
		t.Run(w.name, func(t *testing.T) {
			for _, o := range fsutiltest.Outputs(t, "out") {
				t.Run(o.Name, func(t *testing.T) {
					err := w.write(o.Path)
					if (err != nil) != o.Fails {
						t.Fatalf("error %v, want one: %v", err, o.Fails)
					}
					o.Check(t)
					if b := o.Content(t); b != nil && (len(b) < 40 || !bytes.HasPrefix(b, []byte(w.head))) {
						t.Fatalf("wrote %.40q", b)
					}
				})
			}
		})
	}
}
