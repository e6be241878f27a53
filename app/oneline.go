package app

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// oneLine returns msg with every control character but a tab (and the
// Unicode line and paragraph separators) written as a Go escape ("\n",
// "\x1b"), so that an error stays the one line on stderr the exit-status
// contract promises even when it names a path with a newline in it, and
// a name cannot move a terminal's cursor. A message without one is
// returned as it is.
func oneLine(msg string) string {
	if strings.IndexFunc(msg, breaksLine) < 0 {
		return msg
	}
	var b strings.Builder
	for len(msg) > 0 {
		r, n := utf8.DecodeRuneInString(msg)
		raw := msg[:n]
		msg = msg[n:]
		switch {
		case !breaksLine(r):
			b.WriteString(raw) // a byte that is not UTF-8 stays as it is
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// breaksLine reports whether r, printed raw, could end or overwrite a
// line of text: a control character other than a tab, U+2028 or U+2029.
func breaksLine(r rune) bool {
	return r != '\t' && unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
}
