package schema

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Every STRING column of a Parquet file must hold UTF-8: DuckDB refuses to
// read a file with other bytes in one ("Invalid string encoding found in
// Parquet file"), and with it every query over a glob that includes the
// file. Text that comes from outside (a file name, an error text) is made
// valid before it is written into one.

// EscapeInvalidUTF8 returns s when it is valid UTF-8; otherwise s with
// each byte that does not belong to a valid UTF-8 sequence written as
// \xHH (lowercase hex), the notation of Go's %q and of bash's $'...'.
// The rest of s is kept as it is, so a person still recognises it, can
// type it again (ls $'bad\xffname'), and two names that differ only in
// such bytes stay different (U+FFFD would make them one). A literal
// backslash is not escaped: the result is for people, not to be decoded.
func EscapeInvalidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	const hexDigits = "0123456789abcdef"
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteString(`\x`)
			b.WriteByte(hexDigits[s[i]>>4])
			b.WriteByte(hexDigits[s[i]&0xf])
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// QuoteMax bounds what Quote returns, in bytes, its "..." included.
const QuoteMax = 60

// Quote returns s for an error message that quotes input: Go-quoted as by
// %q (a control or invalid byte becomes an escape such as \x1f, so binary
// input cannot garble a terminal or a log), and cut to the longest prefix
// whose quoted form, with "..." after it, fits in QuoteMax bytes. A
// prefix ends on a whole rune; escapes make it shorter for binary input.
func Quote(s string) string {
	if q := strconv.Quote(s); len(q) <= QuoteMax {
		return q
	}
	q := `""`
	for i := 0; i < len(s); {
		_, n := utf8.DecodeRuneInString(s[i:])
		next := strconv.Quote(s[:i+n])
		if len(next)+len("...") > QuoteMax {
			break
		}
		q, i = next, i+n
	}
	return q + "..."
}
