package rowio

import (
	"errors"
	"fmt"
)

// Parquet's footer and page headers are Thrift compact-protocol structs.
// parquet-go's decoder trusts the sizes they declare: a list header makes
// a slice of that many elements before reading one, and its recursion has
// no depth bound. walkThrift checks one struct's encoding without
// allocating, so that only bytes known to decode into bounded memory reach
// the decoder.

// errShort means the struct continues past the bytes given (or declares
// more elements or bytes than remain).
var errShort = errors.New("truncated")

// maxThriftDepth bounds struct and container nesting; Parquet's metadata
// nests about 8 deep.
const maxThriftDepth = 32

// thriftShape summarises a walked struct.
type thriftShape struct {
	size    int   // bytes the struct occupies
	structs int64 // struct elements in lists, sets and maps
	others  int64 // other container elements
}

// goBytes is a bound on the memory the decoder allocates for the struct's
// containers: the largest Parquet metadata struct a list holds is
// format.ColumnChunk (560 bytes in parquet-go v0.32.0).
func (s thriftShape) goBytes() int64 { return s.structs*640 + s.others*24 }

// walkThrift checks the compact-protocol struct at the start of b.
func walkThrift(b []byte) (thriftShape, error) {
	w := thriftWalker{b: b}
	err := w.structure(0)
	return thriftShape{size: w.off, structs: w.structs, others: w.others}, err
}

type thriftWalker struct {
	b               []byte
	off             int
	structs, others int64
}

// compact protocol type ids
const (
	tTrue, tFalse, tByte, tI16, tI32, tI64, tDouble, tBinary, tList, tSet, tMap, tStruct, tUUID = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13
)

func (w *thriftWalker) byte() (byte, error) {
	if w.off >= len(w.b) {
		return 0, errShort
	}
	c := w.b[w.off]
	w.off++
	return c, nil
}

func (w *thriftWalker) uvarint() (uint64, error) {
	var v uint64
	for shift := 0; shift < 70; shift += 7 {
		c, err := w.byte()
		if err != nil {
			return 0, err
		}
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v, nil
		}
	}
	return 0, errors.New("thrift varint longer than 10 bytes")
}

func (w *thriftWalker) skip(n uint64) error {
	if n > uint64(len(w.b)-w.off) {
		return errShort
	}
	w.off += int(n)
	return nil
}

func (w *thriftWalker) structure(depth int) error {
	if depth > maxThriftDepth {
		return fmt.Errorf("thrift structs nested deeper than %d", maxThriftDepth)
	}
	for {
		h, err := w.byte()
		if err != nil {
			return err
		}
		if h == 0 {
			return nil // STOP
		}
		typ := h & 0x0f
		if h>>4 == 0 { // long form: the field id follows as a varint
			if _, err := w.uvarint(); err != nil {
				return err
			}
		}
		if typ == tTrue || typ == tFalse {
			continue // a field's boolean lives in its header
		}
		if err := w.value(typ, depth); err != nil {
			return err
		}
	}
}

func (w *thriftWalker) value(typ byte, depth int) error {
	switch typ {
	case tTrue, tFalse, tByte:
		return w.skip(1)
	case tI16, tI32, tI64:
		_, err := w.uvarint()
		return err
	case tDouble:
		return w.skip(8)
	case tUUID:
		return w.skip(16)
	case tBinary:
		n, err := w.uvarint()
		if err != nil {
			return err
		}
		return w.skip(n)
	case tList, tSet:
		h, err := w.byte()
		if err != nil {
			return err
		}
		n := uint64(h >> 4)
		if n == 15 {
			if n, err = w.uvarint(); err != nil {
				return err
			}
		}
		return w.elements(n, h&0x0f, 0, depth)
	case tMap:
		n, err := w.uvarint()
		if err != nil || n == 0 {
			return err
		}
		kv, err := w.byte()
		if err != nil {
			return err
		}
		return w.elements(n, kv>>4, kv&0x0f, depth)
	case tStruct:
		return w.structure(depth + 1)
	}
	return fmt.Errorf("unknown thrift type %d", typ)
}

// elements walks n container elements of type t (and u, for map values).
// Every element takes at least one byte, so a count larger than the bytes
// left is a lie.
func (w *thriftWalker) elements(n uint64, t, u byte, depth int) error {
	if n > uint64(len(w.b)-w.off) {
		return errShort
	}
	for i := uint64(0); i < n; i++ {
		for _, typ := range []byte{t, u} {
			if typ == 0 {
				continue
			}
			if typ == tStruct {
				w.structs++
			} else {
				w.others++
			}
			if err := w.value(typ, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}
