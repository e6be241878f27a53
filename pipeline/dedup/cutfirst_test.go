package dedup

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// schemaEnd is where the schema message of stream, as cutCapture writes
// it, ends: the length of a stream with no batch, less its end-of-stream
// marker.
func schemaEnd(t *testing.T, stream []byte) int {
	t.Helper()
	var buf bytes.Buffer
	w := rowio.NewArrowWriter[schema.Observation]("test", &buf)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	n := buf.Len() - 8
	if n <= 0 || !bytes.Equal(buf.Bytes()[:n], stream[:n]) {
		t.Fatalf("no schema message of its own: %d bytes", buf.Len())
	}
	return n
}

// TestDedupCutFileStaysBad: a file named as INPUT that is cut inside its
// schema message tells nothing of what it holds, and one whose first
// batch is garbage is not cut: both stay bad input, nothing committed.
func TestDedupCutFileStaysBad(t *testing.T) {
	stream, ends := cutCapture(t, genObs(82, 300, 100))
	head := schemaEnd(t, stream)
	junk := append(bytes.Clone(stream[:head]), 0xff, 0xff, 0xff, 0xff, 32, 0, 0, 0)
	junk = append(junk, bytes.Repeat([]byte{0x5a}, ends[0]-head)...)
	for _, tt := range []struct {
		name, want string
		in         []byte
	}{
		{"cut inside the schema", "ends 30 bytes into its schema", stream[:30]},
		{"garbage for its first batch", "corrupt Arrow IPC stream", junk},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "obs.arrows")
			if err := os.WriteFile(path, tt.in, 0o644); err != nil {
				t.Fatal(err)
			}
			data := filepath.Join(t.TempDir(), "ds")
			st, err := run(t, data, nil, path)
			if exitcode.Of(err) != exitcode.Usage || st.Commits != 0 || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, %d commits; want bad input saying %q, nothing committed", err, st.Commits, tt.want)
			}
		})
	}
}
