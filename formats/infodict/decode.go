package infodict

import (
	"errors"
	"fmt"

	"github.com/anacrolix/torrent/bencode"
)

// DecodeDict decodes b, exactly one bencoded dictionary, into v, after
// checking its shape with the bounded scanner (Scan).
func DecodeDict(b []byte, v any) error {
	n, err := Scan(b, MaxDepth)
	if err != nil {
		return err
	}
	if n != len(b) {
		return fmt.Errorf("%w: %d trailing bytes", ErrBencode, len(b)-n)
	}
	if b[0] != 'd' {
		return fmt.Errorf("%w: not a dictionary", ErrBencode)
	}
	if err := bencode.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%w: %v", ErrBencode, err)
	}
	return nil
}

var errNotInt = errors.New("not a bencoded integer")

// Int parses a raw bencoded integer ("i42e").
func Int(b []byte) (int64, error) {
	if len(b) < 3 || b[0] != 'i' {
		return 0, errNotInt
	}
	n, err := scanInt(b[1:], 'e')
	if err != nil || n != len(b)-1 {
		return 0, errNotInt
	}
	neg := b[1] == '-'
	digits := b[1 : len(b)-1]
	if neg {
		digits = digits[1:]
	}
	v, _ := parseDigits(digits)
	if neg {
		v = -v
	}
	return v, nil
}

// Clip is b cut to its first 32 bytes, for an error message.
func Clip(b []byte) []byte {
	if len(b) > 32 {
		return b[:32]
	}
	return b
}
