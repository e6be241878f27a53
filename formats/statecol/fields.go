package statecol

import (
	"errors"
	"unsafe"

	"github.com/parquet-go/parquet-go"

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

// readInt64Field decodes an INT64 column into the int64 field at off.
func readInt64Field(c parquet.ColumnChunk, st []schema.State, off uintptr) error {
	return readWordField(c, st, off, func(p parquet.Page) []int64 { return values(p).Int64() })
}

// readDoubleField decodes a DOUBLE column into the float64 field at off.
func readDoubleField(c parquet.ColumnChunk, st []schema.State, off uintptr) error {
	return readWordField(c, st, off, func(p parquet.Page) []float64 { return values(p).Double() })
}

// readWordField decodes a column of 8-byte values (pageValues gives a
// page's non-null ones) into the field of that type at off.
func readWordField[T int64 | float64](c parquet.ColumnChunk, st []schema.State, off uintptr, pageValues func(parquet.Page) []T) error {
	row, n := 0, len(st)
	err := EachPage(c, func(p parquet.Page) error {
		vs := pageValues(p)
		defs, err := levels(p, row, n, len(vs))
		if err != nil {
			return err
		}
		if len(defs) == 0 {
			for k, v := range vs {
				*(*T)(fieldAt(st, row+k, off)) = v
			}
		} else {
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
		row += pageRows(defs, len(vs))
		return nil
	})
	return complete(err, row, n)
}

// readInt32Field decodes an INT32 column into the int32 field at off, or
// (int8Field) the int8 field.
func readInt32Field(c parquet.ColumnChunk, st []schema.State, off uintptr, int8Field bool) error {
	row, n := 0, len(st)
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
func readStringField(c parquet.ColumnChunk, st []schema.State, off uintptr) error {
	row, n := 0, len(st)
	var lastDict parquet.Dictionary // the pages of a chunk share one
	var dictStrings []string
	err := EachPage(c, func(p parquet.Page) error {
		var dict []string
		var ix []int32
		var buf []byte
		var offs []uint32
		nvals := 0
		if d := p.Dictionary(); d != nil {
			if d != lastDict || dictStrings == nil {
				dictStrings = make([]string, d.Len())
				for i := range dictStrings {
					dictStrings[i] = string(d.Index(int32(i)).ByteArray())
				}
				lastDict = d
			}
			dict = dictStrings
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
func readBytesField(c parquet.ColumnChunk, st []schema.State, off uintptr) error {
	row, n := 0, len(st)
	err := EachPage(c, func(p parquet.Page) error {
		buf, offs := values(p).ByteArray()
		nvals := max(len(offs)-1, 0)
		defs, err := levels(p, row, n, nvals)
		if err != nil {
			return err
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
