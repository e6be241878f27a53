package dataset

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// excerptLen is how many bytes of a damaged file's content an error
// quotes: enough to recognise what was written there (a CSV header, a
// Parquet magic), not the file itself.
const excerptLen = 64

// excerpt quotes at most excerptLen bytes of s, escaped onto one line,
// and says how long s was when it cut it.
func excerpt(s string) string { return excerptOf(s, int64(len(s))) }

// excerptOf is excerpt for s, the first bytes of content size bytes long
// (a file read only in part).
func excerptOf(s string, size int64) string {
	cut := min(len(s), excerptLen)
	for cut < len(s) && cut > excerptLen-utf8.UTFMax && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if int64(cut) == size {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(s[:cut]), size)
}

// jsonError is err from decoding a manifest with the names it quotes
// (json: unknown field "…") cut to an excerpt. It still wraps err.
func jsonError(err error) error {
	const prefix = `json: unknown field "`
	msg := err.Error()
	if !strings.HasPrefix(msg, prefix) || len(msg) <= len(prefix)+excerptLen+1 {
		return err
	}
	name := strings.TrimSuffix(msg[len(prefix):], `"`)
	return &shortError{msg: "json: unknown field " + excerpt(name), err: err}
}

// shortError has a message of its own and wraps the error it shortens.
type shortError struct {
	msg string
	err error
}

func (e *shortError) Error() string { return e.msg }
func (e *shortError) Unwrap() error { return e.err }
