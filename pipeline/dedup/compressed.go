package dedup

import (
	"fmt"

	"github.com/infohash/infohash/formats/sniff"
	"github.com/infohash/infohash/internal/exitcode"
)

// compressedError refuses input name, compressed as c, saying how to
// give it to dedup: decompressed, through a pipe, into the dataset data
// ("" when not known: DIR). path is the file name for the command line,
// "" for a stream (stdin, a pipe).
func compressedError(c *sniff.Compression, name, path, data string) error {
	dir := "DIR"
	if data != "" {
		dir = sniff.ShellWord(data)
	}
	return exitcode.BadInput(fmt.Errorf("dedup: %w", c.Refuse(sniff.Hint{Name: name, Path: path, Cmd: "infohash dedup --data " + dir + " -"})))
}
