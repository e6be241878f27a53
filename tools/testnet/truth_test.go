package testnet

import (
	"bytes"
	"testing"

	"github.com/infohash/infohash/formats/fsutil/fsutiltest"
)

// TestWriteTruthFileKeepsOutputs: --truth (testnet's, badpeers') naming
// a device or FIFO writes it in place, and through a symbolic link
// writes its target, the link left a link; a directory is refused. It
// renamed a temporary file onto the path: as root, testnet --truth
// /dev/null replaced /dev/null with a regular file.
func TestWriteTruthFileKeepsOutputs(t *testing.T) {
	truth := Truth{Seed: 3, Bootstrap: []string{"127.0.0.1:1"}}
	for _, o := range fsutiltest.Outputs(t, "out") {
		t.Run(o.Name, func(t *testing.T) {
			err := WriteTruthFile(o.Path, truth)
			if (err != nil) != o.Fails {
				t.Fatalf("error %v, want one: %v", err, o.Fails)
			}
			o.Check(t)
			if b := o.Content(t); b != nil && !bytes.Contains(b, []byte(`"seed": 3`)) {
				t.Fatalf("wrote %q", b)
			}
		})
	}
}
