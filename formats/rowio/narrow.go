package rowio

import (
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// narrowCheck finds the values of a Parquet file's INT32 and INT64
// columns past what the int32 or int8 fields they are read into hold: a
// UINTEGER's 2^32-1 (parquet-go reads its bits: -1), an INT32's or
// SMALLINT's 300 into an int8 (parquet-go keeps its low byte: 44), an
// INT64's 2^40 or a UBIGINT's 2^64-1 into an int32 (parquet-go keeps the
// low 32 bits: 0, -1). The field holds no
// trace of the value, so the check reads the rows of those columns again
// as stored (raw), beside the row reader; it is made only when the file
// has such a column (decided from its schema once), and refuses a value
// past the field by value, an IntRangeError, as the Arrow reader does.
type narrowCheck struct {
	cols []narrowColumn
	raw  *parquet.Reader // the file's columns of cols, as stored
	buf  []parquet.Row
	row  int64 // rows checked so far: the file's row of the next one
}

// narrowColumn is an int32 or int8 field (a pointer to one, or a field of
// a list's structs: name "list.field") read from a leaf of raw's schema
// whose values may be past it.
type narrowColumn struct {
	name     string
	leaf     int // the leaf's column index in raw's schema
	unsigned bool
	wide     bool // the leaf is an INT64
	kind     kind
}

// narrowCheckOf is the check of the rows of T read from pf: nil when no
// column of pf can hold a value past the field it is read into.
func narrowCheckOf(t reflect.Type, pf *parquet.File) *narrowCheck {
	got := pf.Schema()
	type use struct {
		name string
		kind kind
		path []string
	}
	var uses []use   // the fields that may overflow, and their leaves
	var top []string // the top-level columns raw reads
	for _, f := range planOf(t).fields {
		if (f.kind == kInt8 || f.kind == kInt32) && mayOverflow(got, []string{f.name}, f.kind) {
			uses = append(uses, use{f.name, f.kind, []string{f.name}})
		}
		for _, e := range elemFields(f) {
			for _, path := range elemLeaves(got, f, e) {
				if mayOverflow(got, path, e.kind) {
					uses = append(uses, use{f.name + "." + e.name, e.kind, path})
				}
			}
		}
		if len(uses) > 0 && uses[len(uses)-1].path[0] == f.name {
			top = append(top, f.name)
		}
	}
	if len(top) == 0 {
		return nil
	}
	group := parquet.Group{}
	for _, name := range top {
		for _, n := range got.Fields() {
			if n.Name() == name {
				group[name] = n
			}
		}
	}
	proj := parquet.NewSchema("narrow", group)
	c := &narrowCheck{raw: parquet.NewReader(pf, proj)}
	for _, u := range uses {
		if leaf, ok := proj.Lookup(u.path...); ok {
			c.cols = append(c.cols, narrowColumn{name: u.name, leaf: leaf.ColumnIndex,
				unsigned: UnsignedInt(leaf.Node.Type()), wide: leaf.Node.Type().Kind() == parquet.Int64, kind: u.kind})
		}
	}
	return c
}

// elemFields are the int32 and int8 fields of the structs of f, a list.
func elemFields(f field) []field {
	if f.kind != kStructList {
		return nil
	}
	var out []field
	for _, e := range f.elem.fields {
		if e.kind == kInt8 || e.kind == kInt32 {
			out = append(out, e)
		}
	}
	return out
}

// mayOverflow reports whether the INT32 or INT64 leaf of s at path holds
// values past a field of kind k (an int32 or int8 one): a UINTEGER's for
// an int32, a SMALLINT's for an int8, any INT64's. A leaf of another type
// is CheckSchema's to refuse (Reader refuses an INT64 for an int32 field
// so; a reader of parquet-go's own may take one, as dedup's of peer_port
// does, and reads it by value).
func mayOverflow(s *parquet.Schema, path []string, k kind) bool {
	leaf, ok := s.Lookup(path...)
	if ok && leaf.Node.Type().Kind() == parquet.Int64 {
		return k == kInt8 || k == kInt32
	}
	if !ok || leaf.Node.Type().Kind() != parquet.Int32 {
		return false
	}
	lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
	if lt := leaf.Node.Type().LogicalType(); lt != nil {
		if it, ok := lt.Value.(*format.IntType); ok && it.BitWidth < 32 && it.IsSigned {
			lo, hi = -1<<(it.BitWidth-1), 1<<(it.BitWidth-1)-1
		} else if ok && !it.IsSigned {
			lo, hi = 0, 1<<it.BitWidth-1
		}
	}
	flo, fhi := intBounds(k)
	return lo < flo || hi > fhi
}

// check reads the next n rows of raw, those the row reader read, and
// returns how many rows precede the first value past its field, and an
// IntRangeError placing it.
func (c *narrowCheck) check(n int) (int, error) {
	if c == nil || n == 0 {
		return n, nil
	}
	if cap(c.buf) < n {
		c.buf = make([]parquet.Row, n)
	}
	rows := c.buf[:n]
	for got := 0; got < n; {
		k, err := c.raw.ReadRows(rows[got:])
		got += k
		if err != nil && (got < n || !errors.Is(err, io.EOF)) {
			return 0, &CorruptError{Format: "Parquet", Err: fmt.Errorf("rows from %d read again: %w", c.row+1, err)}
		}
	}
	for i, row := range rows {
		for _, v := range row {
			for _, col := range c.cols {
				if v.Column() != col.leaf || v.IsNull() {
					continue
				}
				err := int32Past(col.name, c.row+int64(i), v.Int32(), col.unsigned, col.kind)
				if col.wide {
					err = int64Past(col.name, c.row+int64(i), v.Int64(), col.unsigned, col.kind)
				}
				if err != nil {
					return i, err
				}
			}
		}
	}
	c.row += int64(n)
	return n, nil
}

// Int32Past is the IntRangeError of v, a value of the INT32 column
// column at row (counted from 0; its message counts from 1) of a Parquet
// file, when the field it is
// read into cannot hold it: an int8 field (toInt8), else an int32 one; nil
// when it can. The error gives the value the file holds: an unsigned
// column's (UnsignedInt) is uint32(v), so a UINTEGER's 4294967295 (the
// bits of -1) is reported as 4294967295, never as -1. It is the check
// narrowCheck makes, for a reader that decodes a file's pages itself
// (statecol).
func Int32Past(column string, row int64, v int32, unsigned, toInt8 bool) error {
	k := kInt32
	if toInt8 {
		k = kInt8
	}
	if err := int32Past(column, row, v, unsigned, k); err != nil {
		return err
	}
	return nil
}

// int32Past is Int32Past for a field of kind k.
func int32Past(column string, row int64, v int32, unsigned bool, k kind) *IntRangeError {
	x := int64(v)
	if unsigned {
		x = int64(uint32(v))
	}
	return int64Past(column, row, x, false, k)
}

// Int64Past is Int32Past for v, a value of an INT64 column (or any
// integer's, widened): nil when the int32 or int8 field (toInt8) it is
// read into holds it. An unsigned column's v is the bits of a uint64: a
// UBIGINT's 2^64-1 (the bits of -1) is reported as 18446744073709551615.
// It is the check narrowCheck makes of an INT64 column, for a reader that
// reads the values itself (dedup's of an Arrow peer_port).
func Int64Past(column string, row int64, v int64, unsigned, toInt8 bool) error {
	k := kInt32
	if toInt8 {
		k = kInt8
	}
	if err := int64Past(column, row, v, unsigned, k); err != nil {
		return err
	}
	return nil
}

// int64Past is Int64Past for a field of kind k.
func int64Past(column string, row int64, v int64, unsigned bool, k kind) *IntRangeError {
	if lo, hi := intBounds(k); (v >= 0 || !unsigned) && v >= lo && v <= hi {
		return nil
	}
	err := intRangeError(column, k, v)
	err.Negative = v < 0 && !unsigned
	err.Row = row
	return err
}

// close releases raw.
func (c *narrowCheck) close() {
	if c != nil {
		c.raw.Close()
	}
}

// checkInts checks rows, the next ones read from a Parquet file, for a
// value past its field (IntCheck's checks).
func (r *Reader[T]) checkInts(rows []T) (int, error) {
	return checkInts(&r.unsigned, r.narrow, rows)
}
