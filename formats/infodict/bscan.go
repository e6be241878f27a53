package infodict

import (
	"errors"
	"fmt"

	"github.com/infohash/infohash/formats/bencode"
)

// MaxDepth bounds the nesting of lists and dictionaries accepted
// from peers. Real info dictionaries nest a handful of levels (v2 file
// trees one level per directory); the anacrolix decoder recurses per level,
// so an unbounded depth would let a peer exhaust the goroutine stack.
const MaxDepth = bencode.MaxDepthLimit

// ErrBencode is wrapped by every error Scan returns.
var ErrBencode = errors.New("bad bencode")

// Scan checks that b starts with exactly one well-formed bencoded
// value nested at most maxDepth deep (1 to MaxDepth; any other value means
// MaxDepth), and returns its length in bytes. Strings must fit inside b,
// integers are decimal with an optional sign and fit an int64 (leading
// zeros and "-0" refused), and dictionary keys must be strings; nothing
// else is capped. It is formats/bencode's walker, which never allocates
// and never recurses, so it is safe on any input before a reflective
// decoder sees it.
func Scan(b []byte, maxDepth int) (int, error) {
	d := bencode.NewDecoder(b, bencode.Limits{MaxDepth: maxDepth})
	if err := d.Skip(); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrBencode, err)
	}
	return d.Offset(), nil
}

var errNotInt = errors.New("not a bencoded integer")

// Int parses a raw bencoded integer ("i42e"), canonical and within int64
// as Scan checks it, with nothing after it.
func Int(b []byte) (int64, error) {
	d := bencode.NewDecoder(b, bencode.Limits{})
	v, err := d.Int()
	if err != nil || d.Offset() != len(b) {
		return 0, errNotInt
	}
	return v, nil
}
