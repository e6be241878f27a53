package rowio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/pierrec/lz4/v4"
)

// parquet-go v0.32.0 cannot read LZ4_RAW pages: its codec (compress/lz4)
// decodes into a buffer of its own when the one Column.decompress hands
// it is short of 3× the compressed size, and decompress keeps its own
// buffer whenever the page decoded to no more than the header declares,
// so the page reads as stale pooled bytes (random hashes, which do not
// compress, always); on corrupt data the codec doubles its buffer
// forever. No FileOption supplies another codec, and the codec table
// (compressionCodecs) is unexported: LookupCompressionCodec always
// returns its Lz4Raw, whose Decode is fixed. So rowio decompresses
// LZ4_RAW pages itself, with pierrec/lz4 (the library parquet-go's codec
// wraps), before parquet-go sees them: parquet-go reads a view of the
// file in which each LZ4_RAW column chunk it reads is UNCOMPRESSED
// (unpackLZ4, lz4view.go).

// lz4Size walks the sequences of the LZ4 block src (the LZ4_RAW codec's
// data) without decoding it, and returns the length it decompresses to;
// it stops, returning a length over most, as soon as that passes most.
// It refuses what pierrec/lz4's UncompressBlock refuses: literals or a
// match offset past the end of the block, an offset of 0 or before the
// start of the output, and a last sequence with a match length.
func lz4Size(src []byte, most int64) (int64, error) {
	var out int64
	length := func(i int, n int64) (int, int64, error) { // n and its extra bytes from src[i]
		for {
			if i >= len(src) {
				return i, 0, errors.New("LZ4_RAW: truncated length")
			}
			b := src[i]
			i, n = i+1, n+int64(b)
			if b != 255 {
				return i, n, nil
			}
		}
	}
	for i := 0; i < len(src); {
		tok := src[i]
		i++
		lit, err := int64(tok>>4), error(nil)
		if lit == 15 {
			if i, lit, err = length(i, lit); err != nil {
				return 0, err
			}
		}
		if lit > int64(len(src)-i) {
			return 0, errors.New("LZ4_RAW: literals run past the end of the block")
		}
		i += int(lit)
		if out += lit; out > most {
			return out, nil
		}
		if i == len(src) {
			if tok&15 != 0 {
				return 0, errors.New("LZ4_RAW: the last sequence has a match")
			}
			break
		}
		if len(src)-i < 2 {
			return 0, errors.New("LZ4_RAW: truncated match offset")
		}
		offset := int64(src[i]) | int64(src[i+1])<<8
		i += 2
		if offset == 0 || offset > out {
			return 0, fmt.Errorf("LZ4_RAW: match offset %d at %d bytes of output", offset, out)
		}
		match := int64(tok&15) + 4
		if tok&15 == 15 {
			if i, match, err = length(i, match); err != nil {
				return 0, err
			}
		}
		if out += match; out > most {
			return out, nil
		}
	}
	return out, nil
}

// unLZ4 decompresses the LZ4 block src into dst, which it must fill.
func unLZ4(dst, src []byte) error {
	n, err := lz4.UncompressBlock(src, dst)
	switch {
	case err != nil:
		return fmt.Errorf("LZ4_RAW: %v", err)
	case n != len(dst):
		return fmt.Errorf("LZ4_RAW: the block decompresses to %d bytes, not %d", n, len(dst))
	}
	return nil
}

// lz4Page is the page checkLZ4 checked last: its data (at at, as read),
// and the bytes it decompresses to.
type lz4Page struct {
	at   int64
	src  []byte
	size int64
	out  []byte
}

// checkLZ4 checks that the LZ4_RAW page data of n bytes at off
// decompresses to usize bytes, walking its sequences (lz4Size): nothing
// of usize is allocated. decompressing decodes it if asked.
func (s *pageScanner) checkLZ4(off, n, usize int64) error {
	p := &s.lz4
	p.at, p.src = -1, slices.Grow(p.src[:0], int(n))[:n]
	if _, err := s.r.ReadAt(p.src, off); err != nil {
		return fmt.Errorf("LZ4_RAW: %v", err)
	}
	got, err := lz4Size(p.src, usize)
	switch {
	case err != nil:
		return err
	case got > usize:
		return fmt.Errorf("declares %d uncompressed bytes, its %d LZ4_RAW bytes decompress to %d or more", usize, n, got)
	case got < usize:
		return fmt.Errorf("declares %d uncompressed bytes, its %d LZ4_RAW bytes decompress to %d", usize, n, got)
	}
	p.at, p.size = off, usize
	return nil
}

// decompressLZ4 is decompressing for an LZ4_RAW page: the one checkLZ4
// checked last, decoded whole.
func (s *pageScanner) decompressLZ4(off, n int64) (io.Reader, error) {
	p := &s.lz4
	if off != p.at || n != int64(len(p.src)) {
		return nil, fmt.Errorf("LZ4_RAW: the page data at offset %d was not checked", off)
	}
	p.out = slices.Grow(p.out[:0], int(p.size))[:p.size]
	if err := unLZ4(p.out, p.src); err != nil {
		return nil, err
	}
	return bytes.NewReader(p.out), nil
}
