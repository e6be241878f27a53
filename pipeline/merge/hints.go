package merge

import (
	"fmt"

	"github.com/infohash/infohash/formats/sniff"
	"github.com/infohash/infohash/internal/exitcode"
)

// compressedResults refuses in, compressed as c (bad input), saying how
// to give it to merge: decompressed, on stdin, which takes an Arrow
// stream or Parquet (spooled whole before it is read). A spool (stdin,
// a pipe, a leftover) gets the stream form of the hint, a file its
// path.
func compressedResults(c *sniff.Compression, in input) error {
	dir := "DIR"
	if in.data != "" {
		dir = sniff.ShellWord(in.data)
	}
	h := sniff.Hint{Name: in.name, Cmd: "infohash merge --data " + dir + " -"}
	if !in.inbox {
		h.Path = in.path
	}
	return exitcode.BadInput(fmt.Errorf("merge: %w", c.Refuse(h)))
}
