// Package sniff tells what an input holds from its first bytes: Parquet,
// an Arrow IPC stream, a compressed file (gzip, zstd, bzip2, xz), or
// text such as a hash list. dedup, fetch and merge each read some of
// these kinds; telling them apart in one place lets each refuse a
// compressed input the same way, in one line saying how to decompress
// it into the command (Compression.Refuse), instead of misreading it.
package sniff

import "bytes"

// HeadSize is how many first bytes Of looks at: an input's first
// HeadSize bytes, or all of a shorter one, tell its kind.
const HeadSize = 8

// Kind is what an input holds, as its first bytes tell.
type Kind int

// The kinds Of tells apart.
const (
	Empty      Kind = iota // no bytes at all
	Compressed             // gzip, zstd, bzip2 or xz: CompressionOf says which
	Parquet                // starts with "PAR1"
	Arrow                  // an Arrow IPC stream: starts with a continuation marker
	Binary                 // none of the above, and a NUL: not text
	Text                   // none of the above: text, such as a hash list
)

var (
	parquetMagic = []byte("PAR1")
	arrowMagic   = []byte{0xff, 0xff, 0xff, 0xff}
)

// Of tells the kind of an input from head, its first HeadSize bytes (or
// all of a shorter input).
func Of(head []byte) Kind {
	switch {
	case len(head) == 0:
		return Empty
	case CompressionOf(head) != nil:
		return Compressed
	case bytes.HasPrefix(head, parquetMagic):
		return Parquet
	case bytes.HasPrefix(head, arrowMagic):
		return Arrow
	case bytes.IndexByte(head, 0) >= 0:
		return Binary
	}
	return Text
}

// EmptyHint is what an empty input's error adds when the input came
// through a pipe (stdin, a named pipe or FIFO): the command before it
// most likely failed and wrote nothing (an empty list or batch is still
// a line or an Arrow stream with its schema). dedup, fetch and merge say
// it alike.
func EmptyHint(piped bool) string {
	if piped {
		return " (nothing came through the pipe: did the command before it fail?)"
	}
	return ""
}
