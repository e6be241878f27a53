package rowiotest

import (
	"encoding/binary"
	"errors"
)

// Parquet's footer and page headers are Thrift compact-protocol structs.
// The walker reads the few fields FixPageCRCs needs, with their offsets,
// and skips the rest. It reads mutated bytes, so it allocates nothing and
// trusts no count: a decoder would allocate what a list header declares.

// Thrift compact protocol type ids.
const (
	tTrue, tFalse, tByte, tI16, tI32, tI64, tDouble, tBinary, tList, tSet, tMap, tStruct, tUUID = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13
)

// maxDepth bounds the nesting the walker follows (Parquet's metadata
// nests about 8 deep).
const maxDepth = 64

var errBad = errors.New("rowiotest: not a Thrift struct")

// walker reads Thrift compact-protocol structs in b without allocating.
type walker struct {
	b   []byte
	off int
}

func (w *walker) byte() (byte, error) {
	if w.off >= len(w.b) {
		return 0, errBad
	}
	w.off++
	return w.b[w.off-1], nil
}

func (w *walker) uvarint() (uint64, error) {
	v, n := binary.Uvarint(w.b[w.off:])
	if n <= 0 {
		return 0, errBad
	}
	w.off += n
	return v, nil
}

func (w *walker) i64(v *int64) error {
	u, err := w.uvarint()
	*v = int64(u>>1) ^ -int64(u&1)
	return err
}

func (w *walker) i32(v *int32) error {
	var x int64
	err := w.i64(&x)
	if err == nil && int64(int32(x)) != x {
		return errBad
	}
	*v = int32(x)
	return err
}

// structure walks the struct at w.off, calling field with each field's id
// and type, positioned at its value: field returns whether it read the
// value, else the walker skips it.
func (w *walker) structure(depth int, field func(id int, typ byte) (bool, error)) error {
	if depth > maxDepth {
		return errBad
	}
	id := 0
	for {
		h, err := w.byte()
		if err != nil {
			return err
		}
		if h == 0 {
			return nil // STOP
		}
		typ := h & 0x0f
		if d := int(h >> 4); d != 0 {
			id += d
		} else { // long form: the id follows, a zigzag varint
			var x int64
			if err := w.i64(&x); err != nil {
				return err
			}
			id = int(x)
		}
		if typ == tTrue || typ == tFalse {
			continue // the value is in the field's header
		}
		if done, err := field(id, typ); err != nil {
			return err
		} else if !done {
			if err := w.skip(typ, depth+1); err != nil {
				return err
			}
		}
	}
}

// structs walks a list of structs, calling field for each one's fields;
// a list of anything else is skipped.
func (w *walker) structs(depth int, field func(id int, typ byte) (bool, error)) error {
	n, typ, err := w.listHeader()
	if err != nil {
		return err
	}
	for range n {
		if typ == tStruct {
			err = w.structure(depth+1, field)
		} else {
			err = w.skip(typ, depth+1)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (w *walker) listHeader() (uint64, byte, error) {
	h, err := w.byte()
	if err != nil {
		return 0, 0, err
	}
	n := uint64(h >> 4)
	if n == 15 {
		if n, err = w.uvarint(); err != nil {
			return 0, 0, err
		}
	}
	if n > uint64(len(w.b)-w.off) { // every element takes a byte at least
		return 0, 0, errBad
	}
	return n, h & 0x0f, nil
}

// skip skips a value of type typ.
func (w *walker) skip(typ byte, depth int) error {
	if depth > maxDepth {
		return errBad
	}
	var n uint64
	switch typ {
	case tTrue, tFalse, tByte:
		n = 1
	case tDouble:
		n = 8
	case tUUID:
		n = 16
	case tI16, tI32, tI64:
		_, err := w.uvarint()
		return err
	case tBinary:
		var err error
		if n, err = w.uvarint(); err != nil {
			return err
		}
	case tList, tSet:
		n, elem, err := w.listHeader()
		for i := uint64(0); err == nil && i < n; i++ {
			err = w.skip(elem, depth+1)
		}
		return err
	case tMap:
		n, err := w.uvarint()
		if err != nil || n == 0 {
			return err
		}
		kv, err := w.byte()
		if err == nil && n > uint64(len(w.b)-w.off) {
			return errBad
		}
		for i := uint64(0); err == nil && i < n; i++ {
			if err = w.skip(kv>>4, depth+1); err == nil {
				err = w.skip(kv&0x0f, depth+1)
			}
		}
		return err
	case tStruct:
		return w.structure(depth, func(int, byte) (bool, error) { return false, nil })
	default:
		return errBad
	}
	if n > uint64(len(w.b)-w.off) {
		return errBad
	}
	w.off += int(n)
	return nil
}
