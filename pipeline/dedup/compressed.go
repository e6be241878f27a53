package dedup

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/infohash/infohash/internal/exitcode"
)

// compression is a compressed format dedup recognises by its magic
// bytes, to refuse such an input in one line: without, a file whose
// first 8 bytes hold no NUL (gzip's often do not) was taken for a hash
// list and failed on its first line with an error about text it did not
// hold.
type compression struct {
	name  string // as errors say it: "gzip"
	magic []byte
	// then, when set, are bytes one of which must follow magic (bzip2's
	// block size digit) and after them one of next (its first block's or
	// end-of-stream marker), so that a text starting "BZh" is still text.
	then string
	next [][]byte
	cat  string // the command that decompresses it to stdout
}

var compressions = []compression{
	{name: "gzip", magic: []byte{0x1f, 0x8b}, cat: "zcat"},
	{name: "zstd", magic: []byte{0x28, 0xb5, 0x2f, 0xfd}, cat: "zstdcat"},
	{name: "bzip2", magic: []byte("BZh"), then: "123456789", cat: "bzcat",
		next: [][]byte{{0x31, 0x41, 0x59, 0x26}, {0x17, 0x72, 0x45, 0x38}}},
	{name: "xz", magic: []byte{0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00}, cat: "xzcat"},
}

// compressedAs is the compression whose magic bytes head (an input's
// first bytes, up to 8) starts with, or nil.
func compressedAs(head []byte) *compression {
	for i := range compressions {
		c := &compressions[i]
		if !bytes.HasPrefix(head, c.magic) {
			continue
		}
		if c.then == "" {
			return c
		}
		rest := head[len(c.magic):]
		if len(rest) == 0 || !strings.ContainsRune(c.then, rune(rest[0])) {
			continue
		}
		for _, n := range c.next {
			if bytes.HasPrefix(rest[1:], n) {
				return c
			}
		}
	}
	return nil
}

// compressedError refuses input name, compressed as c, saying how to
// give it to dedup: decompressed, through a pipe. path is the file name
// for the command line, "" for a stream (stdin).
func compressedError(c *compression, name, path string) error {
	how := "... | " + c.cat + " | infohash dedup --data DIR -"
	if path != "" {
		how = c.cat + " " + shellWord(path) + " | infohash dedup --data DIR -"
	}
	return exitcode.BadInput(fmt.Errorf("dedup: %s: %s-compressed input; decompress it first (%s)", name, c.name, how))
}

// shellWord is s as one word of a POSIX shell command line: as it is when
// it holds only characters no shell treats specially, else single-quoted.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./+,:=@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
