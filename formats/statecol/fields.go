package statecol

import (
	"encoding/binary"
	"errors"
	"math"
	"math/bits"
	"unsafe"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// The field readers below decode a column of a row group straight into
// one field of each schema.State (found by its offset), a page at a time
// in plain loops: the generic readers' two closure calls per value were
// a third of the time of a dedup splice. A null sets the zero value, so
// a reused buffer needs no clearing for the columns read.

var stateSize = unsafe.Sizeof(schema.State{})

// fieldAt is the address of the field at offset off of st[i]; callers
// check i < len(st).
func fieldAt(st []schema.State, i int, off uintptr) unsafe.Pointer {
	return unsafe.Add(unsafe.Pointer(unsafe.SliceData(st)), uintptr(i)*stateSize+off)
}

// rowsOut is where a field reader stores a row group's values: row r in
// out.st[r], or, with a selection, only rows sel[i] (sorted offsets in
// the row group), each in st[i]. A splice that changes a few rows of a
// large file decodes them alone: storing every row's fields, 250 bytes
// apart, was most of its time.
type rowsOut struct {
	st    []schema.State
	sel   []int32
	n     int   // rows in the row group
	first int64 // the file's row number of the row group's first row, for errors
	next  int   // the selection's next entry
	pk    []pick
}

// allRows stores every row of a row group in st.
func allRows(st []schema.State) *rowsOut { return &rowsOut{st: st, n: len(st)} }

func (o *rowsOut) restart() { o.next = 0 }

// pick is a selected row of a page: its index in st and the index of its
// value in the page's values (-1 for a null).
type pick struct{ i, v int32 }

// picks lists the selected rows of a page covering rows [row, row+rows)
// (defs its definition levels, nil for a required column; nvals its
// non-null values), in order. Walking the selection instead of every row
// is what makes decoding a few rows of a large row group cheap. A page
// with no nulls (the usual one) or only nulls needs no count of its
// levels; otherwise they are counted eight at a time.
func (o *rowsOut) picks(defs []byte, nvals, row, rows int) []pick {
	out := o.pk[:0]
	switch {
	case len(defs) > 0 && nvals == len(defs):
		defs = nil // every row holds a value: row r is value r
	case len(defs) > 0 && nvals == 0:
		for ; o.next < len(o.sel) && int(o.sel[o.next]) < row+rows; o.next++ {
			if int(o.sel[o.next]) >= row {
				out = append(out, pick{int32(o.next), -1})
			}
		}
		o.pk = out
		return out
	}
	j, v := 0, 0 // row in the page, values before it
	for ; o.next < len(o.sel) && int(o.sel[o.next]) < row+rows; o.next++ {
		r := int(o.sel[o.next]) - row
		if r < 0 {
			continue
		}
		if defs == nil {
			out = append(out, pick{int32(o.next), int32(r)})
			continue
		}
		v += countDefined(defs[j:r])
		j = r
		if defs[r] != 0 {
			out = append(out, pick{int32(o.next), int32(v)})
		} else {
			out = append(out, pick{int32(o.next), -1})
		}
	}
	o.pk = out
	return out
}

// countDefined counts the non-zero levels in defs, eight at a time.
func countDefined(defs []byte) int {
	n, k := 0, 0
	for ; k+8 <= len(defs); k += 8 {
		w := binary.LittleEndian.Uint64(defs[k:])
		// Fold each byte's bits into its lowest: a byte counts once
		// whatever its value, as in the loop below.
		w = (w | w>>1 | w>>2 | w>>3 | w>>4 | w>>5 | w>>6 | w>>7) & 0x0101010101010101
		n += bits.OnesCount64(w)
	}
	for ; k < len(defs); k++ {
		if defs[k] != 0 {
			n++
		}
	}
	return n
}

// pickedValue is the value of a picked row: vs[pk.v], or the zero value
// for a null.
func pickedValue[T any](pk pick, vs []T) (T, error) {
	var v T
	if pk.v < 0 {
		return v, nil
	}
	if int(pk.v) >= len(vs) {
		return v, errFewerValues
	}
	return vs[pk.v], nil
}

// chunkDict holds the strings of a column chunk's dictionary (its pages
// share one), made once.
type chunkDict struct {
	d    parquet.Dictionary
	strs []string
}

// of returns d's strings; fresh reports that they were just made (d is
// not the dictionary of the pages before).
func (c *chunkDict) of(d parquet.Dictionary) (strs []string, fresh bool) {
	if d == c.d && c.strs != nil {
		return c.strs, false
	}
	c.strs = make([]string, d.Len())
	for i := range c.strs {
		c.strs[i] = string(d.Index(int32(i)).ByteArray())
	}
	c.d = d
	return c.strs, true
}

var (
	errMoreValues  = errors.New("more values than rows")
	errFewerValues = errors.New("fewer values than definition levels")
	errDictIndex   = errors.New("dictionary index out of range")
)

// levels returns page p's definition levels (nil for a required column)
// after checking that its rows fit from row on.
func levels(p parquet.Page, row, n, nvals int) ([]byte, error) {
	defs := p.DefinitionLevels()
	rows := nvals
	if len(defs) > 0 {
		rows = len(defs)
	}
	if row+rows > n {
		return nil, errMoreValues
	}
	return defs, nil
}

// pageRows is how many rows page p covers.
func pageRows(defs []byte, nvals int) int {
	if len(defs) > 0 {
		return len(defs)
	}
	return nvals
}

// readInt64Field decodes an INT64 column into the int64 field at off
// (from the values readDeltaInt64 decoded, if it did).
func readInt64Field(c parquet.ColumnChunk, o *rowsOut, off uintptr) error {
	if vs, ok := keptInt64s(c); ok {
		o.restart()
		if err := storeWords(o, off, vs, nil, 0); err != nil {
			return err
		}
		return complete(nil, len(vs), o.n)
	}
	return readWordField(c, o, off, func(p parquet.Page) []int64 { return values(p).Int64() })
}

// readDoubleField decodes a DOUBLE column into the float64 field at off.
func readDoubleField(c parquet.ColumnChunk, o *rowsOut, off uintptr) error {
	return readWordField(c, o, off, func(p parquet.Page) []float64 { return values(p).Double() })
}

// readWordField decodes a column of 8-byte values (pageValues gives a
// page's non-null ones) into the field of that type at off.
func readWordField[T int64 | float64](c parquet.ColumnChunk, o *rowsOut, off uintptr, pageValues func(parquet.Page) []T) error {
	row, n := 0, o.n
	o.restart()
	err := EachPage(c, func(p parquet.Page) error {
		vs := pageValues(p)
		defs, err := levels(p, row, n, len(vs))
		if err != nil {
			return err
		}
		if err := storeWords(o, off, vs, defs, row); err != nil {
			return err
		}
		row += pageRows(defs, len(vs))
		return nil
	})
	return complete(err, row, n)
}

// storeWords stores a page's values vs (defs its levels, nil for a
// required column; row its first row) in the field at off of o's rows.
func storeWords[T int64 | float64](o *rowsOut, off uintptr, vs []T, defs []byte, row int) error {
	st := o.st
	switch {
	case o.sel != nil:
		for _, pk := range o.picks(defs, len(vs), row, pageRows(defs, len(vs))) {
			v, err := pickedValue(pk, vs)
			if err != nil {
				return err
			}
			*(*T)(fieldAt(st, int(pk.i), off)) = v
		}
	case len(defs) == 0:
		if row+len(vs) > len(st) {
			return errMoreValues
		}
		for k, v := range vs {
			*(*T)(fieldAt(st, row+k, off)) = v
		}
	default:
		k := 0
		for j, d := range defs {
			var v T
			if d != 0 {
				if k >= len(vs) {
					return errFewerValues
				}
				v = vs[k]
				k++
			}
			*(*T)(fieldAt(st, row+j, off)) = v
		}
	}
	return nil
}

// readInt32Field decodes the INT32 column name into the int32 field at
// off, or (int8Field) the int8 field. A value the field cannot hold, as
// the file holds it (an unsigned column's as its uint32: a UINTEGER's
// 2^32-1 is not the -1 of its bits), is a rowio.IntRangeError naming the
// column and the file's row (rowio.Int32Past), never stored cut short.
func readInt32Field(c parquet.ColumnChunk, o *rowsOut, off uintptr, name string, int8Field bool) error {
	row, n, st := 0, o.n, o.st
	unsigned := rowio.UnsignedInt(c.Type())
	// The values as stored that the field holds: one test a value.
	lo, hi := int32(math.MinInt32), int32(math.MaxInt32)
	if int8Field {
		lo, hi = math.MinInt8, math.MaxInt8
	}
	if unsigned {
		lo = 0
	}
	o.restart()
	err := EachPage(c, func(p parquet.Page) error {
		vs := values(p).Int32()
		if d := p.Dictionary(); d != nil {
			dict, ix := values(d.Page()).Int32(), vs
			vs = make([]int32, len(ix))
			for k, x := range ix {
				if x < 0 || int(x) >= len(dict) {
					return errDictIndex
				}
				vs[k] = dict[x]
			}
		}
		defs, err := levels(p, row, n, len(vs))
		if err != nil {
			return err
		}
		if o.sel != nil {
			for _, pk := range o.picks(defs, len(vs), row, pageRows(defs, len(vs))) {
				v, err := pickedValue(pk, vs)
				if err != nil {
					return err
				}
				if v < lo || v > hi {
					return rowio.Int32Past(name, o.first+int64(o.sel[pk.i]), v, unsigned, int8Field)
				}
				if int8Field {
					*(*int8)(fieldAt(st, int(pk.i), off)) = int8(v)
				} else {
					*(*int32)(fieldAt(st, int(pk.i), off)) = v
				}
			}
			row += pageRows(defs, len(vs))
			return nil
		}
		k := 0
		for j := range pageRows(defs, len(vs)) {
			var v int32
			if len(defs) == 0 || defs[j] != 0 {
				if k >= len(vs) {
					return errFewerValues
				}
				v = vs[k]
				k++
			}
			if v < lo || v > hi {
				return rowio.Int32Past(name, o.first+int64(row+j), v, unsigned, int8Field)
			}
			if int8Field {
				*(*int8)(fieldAt(st, row+j, off)) = int8(v)
			} else {
				*(*int32)(fieldAt(st, row+j, off)) = v
			}
		}
		row += pageRows(defs, len(vs))
		return nil
	})
	return complete(err, row, n)
}

// readStringField decodes a string column (plain or dictionary) into the
// string field at off; dictionary values are shared strings.
func readStringField(c parquet.ColumnChunk, o *rowsOut, off uintptr) error {
	row, n, st := 0, o.n, o.st
	o.restart()
	var cd chunkDict
	err := EachPage(c, func(p parquet.Page) error {
		var dict []string
		var ix []int32
		var buf []byte
		var offs []uint32
		nvals := 0
		if d := p.Dictionary(); d != nil {
			dict, _ = cd.of(d)
			ix = values(p).Int32()
			for _, x := range ix {
				if x < 0 || int(x) >= len(dict) {
					return errDictIndex
				}
			}
			nvals = len(ix)
		} else {
			buf, offs = values(p).ByteArray()
			nvals = max(len(offs)-1, 0)
		}
		defs, err := levels(p, row, n, nvals)
		if err != nil {
			return err
		}
		if o.sel != nil {
			for _, pk := range o.picks(defs, nvals, row, pageRows(defs, nvals)) {
				var s string
				switch {
				case pk.v < 0:
				case int(pk.v) >= nvals:
					return errFewerValues
				case dict != nil:
					s = dict[ix[pk.v]]
				default:
					s = string(buf[offs[pk.v]:offs[pk.v+1]])
				}
				*(*string)(fieldAt(st, int(pk.i), off)) = s
			}
			row += pageRows(defs, nvals)
			return nil
		}
		k := 0
		for j := range pageRows(defs, nvals) {
			var s string
			if len(defs) == 0 || defs[j] != 0 {
				if k >= nvals {
					return errFewerValues
				}
				if dict != nil {
					s = dict[ix[k]]
				} else {
					s = string(buf[offs[k]:offs[k+1]])
				}
				k++
			}
			*(*string)(fieldAt(st, row+j, off)) = s
		}
		row += pageRows(defs, nvals)
		return nil
	})
	return complete(err, row, n)
}

// readBytesField decodes a byte array column into the []byte field at
// off (each value a copy; nil for null).
func readBytesField(c parquet.ColumnChunk, o *rowsOut, off uintptr) error {
	row, n, st := 0, o.n, o.st
	o.restart()
	err := EachPage(c, func(p parquet.Page) error {
		buf, offs := values(p).ByteArray()
		nvals := max(len(offs)-1, 0)
		defs, err := levels(p, row, n, nvals)
		if err != nil {
			return err
		}
		if o.sel != nil {
			for _, pk := range o.picks(defs, nvals, row, pageRows(defs, nvals)) {
				var b []byte
				if pk.v >= 0 {
					if int(pk.v) >= nvals {
						return errFewerValues
					}
					b = append([]byte(nil), buf[offs[pk.v]:offs[pk.v+1]]...)
				}
				*(*[]byte)(fieldAt(st, int(pk.i), off)) = b
			}
			row += pageRows(defs, nvals)
			return nil
		}
		k := 0
		for j := range pageRows(defs, nvals) {
			var b []byte
			if len(defs) == 0 || defs[j] != 0 {
				if k >= nvals {
					return errFewerValues
				}
				b = append([]byte(nil), buf[offs[k]:offs[k+1]]...)
				k++
			}
			*(*[]byte)(fieldAt(st, row+j, off)) = b
		}
		row += pageRows(defs, nvals)
		return nil
	})
	return complete(err, row, n)
}
