package infodict

import (
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

// Clip is b cut to its first 32 bytes, for an error message.
func Clip(b []byte) []byte {
	if len(b) > 32 {
		return b[:32]
	}
	return b
}
