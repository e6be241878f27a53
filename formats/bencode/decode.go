package bencode

import (
	"errors"
	"fmt"
	"math"
)

// MaxDepthLimit is the deepest nesting any Decoder accepts: Limits.MaxDepth
// is at most this.
const MaxDepthLimit = 64

// maxIntDigits is the most digits an int64 can have.
const maxIntDigits = 19

// Limits bounds what a Decoder accepts. The zero value is the loosest:
// depth MaxDepthLimit and no cap but the input's size and int64.
type Limits struct {
	// MaxDepth is how deeply lists and dictionaries may nest, the
	// outermost one counted: 1 to MaxDepthLimit (any other value means
	// MaxDepthLimit).
	MaxDepth int
	// MaxValues caps the strings and integers read, dictionary keys
	// included (lists and dictionaries themselves are not counted);
	// 0 or less means no cap.
	MaxValues int
	// MaxIntDigits caps the digits of an integer, its sign not counted:
	// 1 to 19 (any other value means 19). An integer whose magnitude
	// exceeds math.MaxInt64 is always refused, so math.MinInt64 is too.
	MaxIntDigits int
	// MaxStringLen caps the length of a string; 0 or less means no cap
	// but the input's end.
	MaxStringLen int
}

// SyntaxError is malformed or over-limit input: what was wrong and at which
// byte of the input.
type SyntaxError struct {
	Offset int
	What   string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("byte %d: %s", e.Offset, e.What) }

// IsSyntax reports whether err is or wraps a *SyntaxError.
func IsSyntax(err error) bool {
	var se *SyntaxError
	return errors.As(err, &se)
}

// Decoder walks the bencode in one byte slice from its start. Its methods
// read one token each and leave the decoder after it; byte slices they
// return alias the input. Dict and List open a container and End closes
// it; String, Int and Skip read a value.
// After an error the decoder's position is unspecified: stop there.
type Decoder struct {
	b      []byte
	pos    int
	depth  int // containers opened by Dict or List and not yet closed
	values int // strings and integers read
	lim    Limits
}

// NewDecoder returns a decoder at the start of b, bounded by lim.
func NewDecoder(b []byte, lim Limits) *Decoder {
	if lim.MaxDepth < 1 || lim.MaxDepth > MaxDepthLimit {
		lim.MaxDepth = MaxDepthLimit
	}
	if lim.MaxIntDigits < 1 || lim.MaxIntDigits > maxIntDigits {
		lim.MaxIntDigits = maxIntDigits
	}
	// No cap is the largest one, so that each check is one comparison.
	if lim.MaxValues <= 0 {
		lim.MaxValues = math.MaxInt
	}
	if lim.MaxStringLen <= 0 {
		lim.MaxStringLen = math.MaxInt
	}
	return &Decoder{b: b, lim: lim}
}

// Offset is the position of the next byte to read: after a whole value
// read from the start, that value's length.
func (d *Decoder) Offset() int { return d.pos }

// Peek returns the next byte without reading it: 'd', 'l', 'i' or a
// digit starts a value, 'e' ends a container; 0 at the end of the input.
func (d *Decoder) Peek() byte {
	if d.pos >= len(d.b) {
		return 0
	}
	return d.b[d.pos]
}

// Fail returns a SyntaxError at the decoder's position, for a caller's own
// checks of what it read.
func (d *Decoder) Fail(what string) error { return &SyntaxError{Offset: d.pos, What: what} }

// Dict opens the dictionary that must come next; read its items up to End.
func (d *Decoder) Dict() error { return d.open('d', "expected a dictionary") }

// List opens the list that must come next; read its items up to End.
func (d *Decoder) List() error { return d.open('l', "expected a list") }

func (d *Decoder) open(c byte, what string) error {
	if d.pos >= len(d.b) || d.b[d.pos] != c {
		return d.Fail(what)
	}
	if d.depth >= d.lim.MaxDepth {
		return d.Fail("nested too deep")
	}
	d.depth++
	d.pos++
	return nil
}

// End reports whether the innermost open container ends here, and if so
// consumes its 'e', closing it. Read a dictionary's items as
//
//	for !d.End() { key, err := d.String(); ...; read one value }
//
// and a list's as for !d.End() { read one value }: at the end of the input
// the read fails.
func (d *Decoder) End() bool {
	if d.pos < len(d.b) && d.b[d.pos] == 'e' {
		d.pos++
		d.depth--
		return true
	}
	return false
}

// String reads a byte string, "<length>:<bytes>". The length is decimal
// without leading zeros.
func (d *Decoder) String() ([]byte, error) {
	if d.values++; d.values > d.lim.MaxValues {
		return nil, d.Fail("too many values")
	}
	b, i := d.b, d.pos
	var n uint64 // 64 bits whatever int's width: 18 digits fit
	j := i
	for ; j < len(b); j++ {
		c := b[j] - '0'
		if c > 9 {
			break
		}
		n = n*10 + uint64(c) // may wrap past 19 digits, refused below
	}
	// 1 to 18 digits (no input is 10^18 bytes long), no leading zero
	if j >= len(b) || b[j] != ':' || uint(j-i-1) >= 18 || (b[i] == '0' && j > i+1) {
		switch {
		case i >= len(b):
			return nil, d.Fail("unexpected end of input")
		case j == i:
			return nil, d.Fail("expected a string")
		case j-i > 18:
			return nil, d.Fail("string runs past the end")
		}
		return nil, d.Fail("bad string length")
	}
	j++
	if n > uint64(len(b)-j) || n > uint64(d.lim.MaxStringLen) {
		if n > uint64(d.lim.MaxStringLen) {
			return nil, d.Fail("string too long")
		}
		return nil, d.Fail("string runs past the end")
	}
	d.pos = j + int(n)
	return b[j:d.pos], nil
}

// Int reads an integer, "i<decimal>e": an optional '-', then at most
// MaxIntDigits digits without leading zeros; "-0" is refused.
func (d *Decoder) Int() (int64, error) {
	if d.values++; d.values > d.lim.MaxValues {
		return 0, d.Fail("too many values")
	}
	b := d.b
	if d.pos >= len(b) || b[d.pos] != 'i' {
		if d.pos >= len(b) {
			return 0, d.Fail("unexpected end of input")
		}
		return 0, d.Fail("expected an integer")
	}
	j := d.pos + 1
	neg := j < len(b) && b[j] == '-'
	if neg {
		j++
	}
	start, end := j, j+d.lim.MaxIntDigits
	var u uint64 // at most 19 digits: no uint64 overflow
	for ; j < len(b); j++ {
		c := b[j] - '0'
		if c > 9 {
			break
		}
		if j == end {
			return 0, d.Fail("integer has too many digits")
		}
		u = u*10 + uint64(c)
	}
	switch {
	case j == start || j >= len(b) || b[j] != 'e':
		return 0, d.Fail("bad integer")
	case b[start] == '0' && j > start+1:
		return 0, d.Fail("integer with a leading zero")
	case neg && u == 0:
		return 0, d.Fail("negative zero")
	case u > math.MaxInt64:
		return 0, d.Fail("integer overflows int64")
	}
	d.pos = j + 1
	if neg {
		return -int64(u), nil
	}
	return int64(u), nil
}

// Skip reads one whole value of any type, checking all of it against the
// limits (its lists and dictionaries nest below those open). It keeps the
// open containers' kinds in a bit set instead of recursing.
func (d *Decoder) Skip() error {
	if d.pos < len(d.b) {
		switch c := d.b[d.pos]; {
		case c >= '0' && c <= '9':
			_, err := d.String()
			return err
		case c == 'i':
			_, err := d.Int()
			return err
		}
	}
	var dicts uint64 // bit k set: the k-th container Skip opened is a dictionary
	open := 0        // containers Skip opened and has not closed
	for {
		if open > 0 {
			isDict := dicts>>(open-1)&1 == 1
			if d.pos >= len(d.b) {
				if isDict {
					return d.Fail("unterminated dictionary")
				}
				return d.Fail("unterminated list")
			}
			if d.b[d.pos] == 'e' {
				d.pos++
				if open--; open == 0 {
					return nil
				}
				continue
			}
			if isDict {
				if _, err := d.String(); err != nil {
					return err
				}
			}
		}
		if d.pos >= len(d.b) {
			return d.Fail("value expected")
		}
		var err error
		switch c := d.b[d.pos]; {
		case c == 'i':
			_, err = d.Int()
		case c >= '0' && c <= '9':
			_, err = d.String()
		case c == 'd' || c == 'l':
			if d.depth+open >= d.lim.MaxDepth {
				return d.Fail("nested too deep")
			}
			if c == 'd' {
				dicts |= 1 << open
			} else {
				dicts &^= 1 << open
			}
			open++
			d.pos++
			continue
		default:
			return d.Fail("invalid value")
		}
		if err != nil {
			return err
		}
		if open == 0 {
			return nil
		}
	}
}
