package infodict

import (
	"errors"
	"fmt"
)

// MaxDepth bounds the nesting of lists and dictionaries accepted
// from peers. Real info dictionaries nest a handful of levels (v2 file
// trees one level per directory); the anacrolix decoder recurses per level,
// so an unbounded depth would let a peer exhaust the goroutine stack.
const MaxDepth = 64

// ErrBencode is wrapped by every error Scan returns.
var ErrBencode = errors.New("bad bencode")

// Scan checks that b starts with exactly one well-formed bencoded
// value nested at most maxDepth deep, and returns its length in bytes.
// Strings must fit inside b, integers are decimal with an optional sign,
// and dictionary keys must be strings. It never allocates and never
// recurses, so it is safe on any input before a reflective decoder sees it.
func Scan(b []byte, maxDepth int) (int, error) {
	// Each open container is one entry: 'l' (list), 'k' (dictionary
	// expecting a key) or 'v' (dictionary expecting the key's value).
	var stackBuf [MaxDepth]byte
	if maxDepth > len(stackBuf) || maxDepth < 1 {
		maxDepth = len(stackBuf)
	}
	stack := stackBuf[:0]
	i := 0
	for {
		if i >= len(b) {
			return 0, fmt.Errorf("%w: truncated at offset %d", ErrBencode, i)
		}
		var top byte
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		c := b[i]
		switch {
		case c == 'e':
			if top == 0 || top == 'v' {
				return 0, fmt.Errorf("%w: unexpected 'e' at offset %d", ErrBencode, i)
			}
			stack = stack[:len(stack)-1]
			i++
		case top == 'k':
			if c < '0' || c > '9' {
				return 0, fmt.Errorf("%w: dictionary key is not a string at offset %d", ErrBencode, i)
			}
			n, err := scanString(b, i)
			if err != nil {
				return 0, err
			}
			i += n
			stack[len(stack)-1] = 'v'
			continue
		case c == 'i':
			n, err := scanInt(b[i+1:], 'e')
			if err != nil {
				return 0, fmt.Errorf("%w: integer at offset %d: %v", ErrBencode, i, err)
			}
			i += 1 + n
		case c >= '0' && c <= '9':
			n, err := scanString(b, i)
			if err != nil {
				return 0, err
			}
			i += n
		case c == 'l' || c == 'd':
			if len(stack) >= maxDepth {
				return 0, fmt.Errorf("%w: nested deeper than %d at offset %d", ErrBencode, maxDepth, i)
			}
			if c == 'l' {
				stack = append(stack, 'l')
			} else {
				stack = append(stack, 'k')
			}
			i++
			continue
		default:
			return 0, fmt.Errorf("%w: unexpected byte %q at offset %d", ErrBencode, c, i)
		}
		// A whole value ended at i.
		if len(stack) == 0 {
			return i, nil
		}
		if stack[len(stack)-1] == 'v' {
			stack[len(stack)-1] = 'k'
		}
	}
}

// scanString returns the length of the bencoded string starting at b[i].
func scanString(b []byte, i int) (int, error) {
	n, err := scanInt(b[i:], ':')
	if err != nil {
		return 0, fmt.Errorf("%w: string length at offset %d: %v", ErrBencode, i, err)
	}
	l, _ := parseDigits(b[i : i+n-1])
	if l > int64(len(b)-i-n) {
		return 0, fmt.Errorf("%w: string at offset %d runs past the end", ErrBencode, i)
	}
	return n + int(l), nil
}

// scanInt scans an optionally signed decimal number ending with term and
// returns the number of bytes including term. Leading zeros and "-0" are
// rejected; at most 19 digits are accepted so the value fits an int64.
func scanInt(b []byte, term byte) (int, error) {
	j := 0
	if j < len(b) && b[j] == '-' && term == 'e' {
		j++
	}
	start := j
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	digits := j - start
	switch {
	case j >= len(b):
		return 0, errors.New("truncated")
	case b[j] != term:
		return 0, fmt.Errorf("unexpected byte %q", b[j])
	case digits == 0:
		return 0, errors.New("no digits")
	case digits > 19:
		return 0, errors.New("too many digits")
	case digits > 1 && b[start] == '0':
		return 0, errors.New("leading zero")
	case start == 1 && b[start] == '0':
		return 0, errors.New("negative zero")
	}
	if _, ok := parseDigits(b[start:j]); !ok {
		return 0, errors.New("overflows int64")
	}
	return j + 1, nil
}

// parseDigits parses unsigned decimal digits into an int64.
func parseDigits(b []byte) (int64, bool) {
	var n int64
	for _, c := range b {
		d := int64(c - '0')
		if n > (1<<63-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}
