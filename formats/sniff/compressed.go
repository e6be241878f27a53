package sniff

import (
	"bytes"
	"fmt"
	"strings"
)

// Compression is a compressed format recognised by its magic bytes. No
// command reads one: without this, a gzip file whose first 8 bytes hold
// no NUL (one with a name and a modification time in its header) was
// taken for a hash list and failed on its first line with an error
// about text it did not hold.
type Compression struct {
	Name string // as errors say it: "gzip"
	Cat  string // the command that decompresses it to stdout: "zcat"
	Ext  string // the extension of a file name that says so: ".gz"

	magic []byte
	// then, when set, are bytes one of which must follow magic (bzip2's
	// block size digit) and after them one of next (its first block's or
	// end-of-stream marker), so that a text starting "BZh" is still text.
	then string
	next [][]byte
}

var compressions = []Compression{
	{Name: "gzip", Cat: "zcat", Ext: ".gz", magic: []byte{0x1f, 0x8b}},
	{Name: "zstd", Cat: "zstdcat", Ext: ".zst", magic: []byte{0x28, 0xb5, 0x2f, 0xfd}},
	{Name: "bzip2", Cat: "bzcat", Ext: ".bz2", magic: []byte("BZh"), then: "123456789",
		next: [][]byte{{0x31, 0x41, 0x59, 0x26}, {0x17, 0x72, 0x45, 0x38}}},
	{Name: "xz", Cat: "xzcat", Ext: ".xz", magic: []byte{0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00}},
}

// CompressionOf is the compression whose magic bytes head (an input's
// first HeadSize bytes) starts with, or nil.
func CompressionOf(head []byte) *Compression {
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

// Hint is what Refuse needs to say how to give a compressed input to the
// command that refuses it.
type Hint struct {
	Name string // the input as the command's errors name it
	Path string // its file, for the command line; "" for a stream (stdin, a pipe)
	// Cmd reads the decompressed input on stdin, as one would type it:
	// "infohash merge --data ./ih -".
	Cmd string
	// Note, when set, follows the command: what to do instead when the
	// input is of a kind Cmd does not take on stdin.
	Note string
}

// Refuse is the error refusing an input compressed as c, in one line:
//
//	NAME: gzip-compressed input; decompress it first (zcat PATH | CMD)
//
// with "... | zcat | CMD" for a stream, PATH and the note (after a "; ")
// as h says. The caller adds its prefix ("dedup: ") and its exit code.
func (c *Compression) Refuse(h Hint) error {
	how := "... | " + c.Cat + " | " + h.Cmd
	if h.Path != "" {
		how = c.Cat + " " + ShellWord(h.Path) + " | " + h.Cmd
	}
	if h.Note != "" {
		how += "; " + h.Note
	}
	return fmt.Errorf("%s: %s-compressed input; decompress it first (%s)", h.Name, c.Name, how)
}

// ShellWord is s as one word of a POSIX shell command line: as it is when
// it holds only characters no shell treats specially, else single-quoted.
func ShellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./+,:=@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
