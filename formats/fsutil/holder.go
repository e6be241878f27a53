package fsutil

import (
	"io"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxHolder bounds what Holder shows of a lock file: what infohash
// writes in one ("host=NAME pid=N since=TIME") is well within it.
const maxHolder = 200

// isPrintable: a rune Holder shows as it is (a space is one, a tab or a
// newline not).
func isPrintable(r rune) bool { return r != utf8.RuneError && unicode.IsPrint(r) }

// Holder is what lock file content b says of its holder, for an error or
// a log line: its text without the blanks around it, cut after maxHolder
// bytes ("..."), and quoted (Go syntax) unless it is one line of printable
// UTF-8. Any process that can write the file can put lines, terminal
// escapes or megabytes in it, which errors are not to carry.
func Holder(b []byte) string {
	s := strings.TrimSpace(string(b))
	cut := ""
	if len(s) > maxHolder {
		n := maxHolder
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s, cut = s[:n], "..."
	}
	if strings.ContainsFunc(s, func(r rune) bool { return !isPrintable(r) }) {
		s = strconv.Quote(s)
	}
	return s + cut
}

// ReadHolder is Holder of the lock file at path, of which it reads at
// most a few kilobytes: "" if it cannot be read, or is no regular file
// (OpenRegular: a FIFO put there would block the read for good).
func ReadHolder(path string) string {
	f, err := OpenRegular(path, os.O_RDONLY, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 4*maxHolder))
	return Holder(b)
}
