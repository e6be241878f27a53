package rowio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/parquet-go/parquet-go/format"
)

// What the codecs parquet-go uses do with a page they are given:
//   - snappy allocates the length the block's header declares;
//   - zstd allocates the content size a frame declares and grows by one
//     block (at most 128 KiB) at a time otherwise;
//   - lz4 (LZ4_RAW) doubles its buffer after any error, forever on
//     corrupt data (and misreads valid pages: rowio decodes them itself,
//     lz4raw.go);
//   - gzip and brotli grow until the stream ends;
//   - and before any of them parquet-go allocates the page's declared
//     uncompressed size.
// checkCodec bounds each before parquet-go decodes the page: from the
// headers for snappy and zstd, by walking the sequences for LZ4_RAW, by
// decoding once for rare gzip and brotli.

// checkCodec checks the compressed data of a page, n bytes at off that
// the header says decompress to usize bytes: parquet-go allocates usize
// first, so it must not exceed what the data can decompress to.
func (s *pageScanner) checkCodec(codec format.CompressionCodec, off, n, usize int64) error {
	lim := s.lim.MaxPageBytes
	lie := func(most int64) error {
		return fmt.Errorf("declares %d uncompressed bytes, its %d %s bytes hold at most %d", usize, n, codec, most)
	}
	// over is the error for data that decompresses to more than the
	// header declares: parquet-go decodes all of it (a 45 KB zstd page
	// of 400 MiB of zeros took 430 MB) and reads the values from its
	// start, so the page would be misread rather than refused.
	over := func(got int64) error {
		return fmt.Errorf("declares %d uncompressed bytes, its %d %s bytes decompress to %d or more", usize, n, codec, got)
	}
	switch codec {
	case format.Uncompressed: // parquet-go reads such pages in place
	case format.Snappy:
		var b [binary.MaxVarintLen64]byte
		k, _ := s.r.ReadAt(b[:min(n, int64(len(b)))], off)
		v, m := binary.Uvarint(b[:k])
		most := 24*n + 64 // a snappy copy tag of 3 bytes makes at most 64
		switch {
		case m <= 0:
			return fmt.Errorf("bad snappy block header")
		case v > uint64(lim):
			return fmt.Errorf("%w: snappy block declares %d bytes (limit %d)", ErrLimit, v, lim)
		case v > uint64(most):
			return fmt.Errorf("snappy block declares %d bytes from %d", v, n)
		case usize > most:
			return lie(most)
		case v > uint64(usize):
			return over(int64(v))
		}
	case format.Zstd:
		most, declared, err := zstdBound(io.NewSectionReader(s.r, off, n), n, lim, min(lim, max(usize, minZstdWindow)))
		switch {
		case err != nil:
			return err
		case usize > most:
			return lie(most)
		case declared > usize:
			return over(declared)
		case declared < 0 && most > usize:
			// A frame without its content size: decode to find out
			// (a bound counts 128 KiB for each compressed block).
			zr, err := s.decompressing(codec, off, n)
			if err != nil {
				return err
			}
			got, err := io.Copy(io.Discard, io.LimitReader(zr, usize+1))
			switch {
			case err != nil:
				return fmt.Errorf("zstd: %v", err)
			case got > usize:
				return over(got)
			}
		}
	case format.Lz4Raw:
		return s.checkLZ4(off, n, usize)
	case format.Gzip, format.Brotli:
		src := io.NewSectionReader(s.r, off, n)
		var zr io.Reader
		if codec == format.Gzip {
			g, err := gzip.NewReader(src)
			if err != nil {
				return fmt.Errorf("gzip: %v", err)
			}
			zr = g
		} else {
			zr = brotli.NewReader(src)
		}
		got, err := io.Copy(io.Discard, io.LimitReader(zr, lim+1))
		switch {
		case err != nil:
			return fmt.Errorf("%s: %v", codec, err)
		case got > lim:
			return fmt.Errorf("%w: %s page decompresses to over %d bytes", ErrLimit, codec, lim)
		case usize > got:
			return lie(got)
		case got > usize:
			return over(got)
		}
	default:
		return fmt.Errorf("%w: compression codec %s", ErrUnsupported, codec)
	}
	return nil
}

// minZstdWindow is the largest zstd window a page may declare whatever its
// size: rowio's own page checks decode zstd as a stream, whose decoder
// allocates the window a frame declares up front. Bounded by lim alone, a
// 10-byte frame made it allocate 513 MiB. Writers size the window to the
// data (libzstd and klauspost's one-shot encoders when the size is known)
// or use a level's default (8 MiB at most below libzstd's --ultra levels),
// so a window over both the page and this is refused as a limit.
const minZstdWindow = 8 << 20

// zstdBound walks the frames and block headers of a zstd page (RFC 8878)
// and returns the most its decoding can produce, and the sum of the
// content sizes its frames declare (-1 if a frame declares none); it fails
// if the most or a frame's declared size is over lim, a frame's window is
// over window, or a frame declares more than its blocks hold.
func zstdBound(r io.ReaderAt, n, lim, window int64) (most, declared int64, err error) {
	var b [18]byte
	at := func(off int64, k int) ([]byte, error) {
		if off+int64(k) > n {
			return nil, errors.New("zstd: truncated frame")
		}
		_, err := r.ReadAt(b[:k], off)
		return b[:k], err
	}
	var total int64
	for pos := int64(0); pos < n; {
		h, err := at(pos, 4)
		if err != nil {
			return 0, 0, err
		}
		magic := binary.LittleEndian.Uint32(h)
		if magic&0xfffffff0 == 0x184d2a50 { // skippable frame
			h, err := at(pos+4, 4)
			if err != nil {
				return 0, 0, err
			}
			pos += 8 + int64(binary.LittleEndian.Uint32(h))
			continue
		}
		if magic != 0xfd2fb528 {
			return 0, 0, errors.New("zstd: not a zstd frame")
		}
		h, err = at(pos+4, 1)
		if err != nil {
			return 0, 0, err
		}
		fhd := h[0]
		single := fhd&0x20 != 0
		fcsLen := [4]int{0, 2, 4, 8}[fhd>>6]
		if fcsLen == 0 && single {
			fcsLen = 1
		}
		hdrLen := 1 + [4]int{0, 1, 2, 4}[fhd&3] + fcsLen
		if !single {
			hdrLen++
		}
		h, err = at(pos+4, hdrLen)
		if err != nil {
			return 0, 0, err
		}
		var fcs uint64
		if fcsLen == 0 {
			declared = -1
		}
		if fcsLen > 0 {
			var v [8]byte
			copy(v[:], h[hdrLen-fcsLen:])
			fcs = binary.LittleEndian.Uint64(v[:])
			if fcsLen == 2 {
				fcs += 256
			}
			if declared >= 0 {
				declared += int64(min(fcs, uint64(lim)+1))
			}
			if fcs > uint64(lim) {
				return 0, 0, fmt.Errorf("%w: zstd frame declares %d bytes (limit %d)", ErrLimit, fcs, lim)
			}
		}
		if !single {
			wd := h[1]
			base := int64(1) << (10 + wd>>3)
			if w := base + base/8*int64(wd&7); w > window {
				return 0, 0, fmt.Errorf("%w: zstd window of %d bytes (limit %d for this page)", ErrLimit, w, window)
			}
		}
		pos += 4 + int64(hdrLen)
		var out int64
		for last := false; !last; {
			h, err := at(pos, 3)
			if err != nil {
				return 0, 0, err
			}
			bh := uint32(h[0]) | uint32(h[1])<<8 | uint32(h[2])<<16
			size := int64(bh >> 3)
			last = bh&1 != 0
			switch (bh >> 1) & 3 {
			case 0: // raw
				out, pos = out+size, pos+3+size
			case 1: // RLE
				out, pos = out+size, pos+4
			case 2: // compressed: at most 128 KiB out
				out, pos = out+128<<10, pos+3+size
			default:
				return 0, 0, errors.New("zstd: reserved block type")
			}
			if pos > n {
				return 0, 0, errors.New("zstd: truncated frame")
			}
			if total+out > lim {
				return 0, 0, fmt.Errorf("%w: zstd page may decompress to over %d bytes", ErrLimit, lim)
			}
		}
		if fhd&0x04 != 0 {
			pos += 4 // content checksum
		}
		if int64(fcs) > out {
			return 0, 0, fmt.Errorf("zstd frame declares %d bytes, its blocks hold at most %d", fcs, out)
		}
		total += out
	}
	return total, declared, nil
}
