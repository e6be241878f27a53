package rowio

import (
	"reflect"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// unsignedCheck finds the values of a Parquet file's unsigned 64-bit
// integer columns (INT(64,false): DuckDB's UBIGINT, a uint64 of
// parquet-go or Arrow) past what the int64 fields they are read into hold.
// parquet-go reads such a column's bits into the field: 2^64-1 would be
// -1, a time in 1969 or a count below zero. The reader refuses it by
// value, an IntRangeError, as it refuses an Arrow uint64 one
// (uint64Getter).
type unsignedCheck struct {
	cols []unsignedColumn
	row  int64 // rows checked so far: the file's row of the next one
}

// unsignedColumn is an int64 field (an integer or epoch ms; a pointer to
// one) read from an unsigned 64-bit column: a top-level one, or one of
// the structs of a list (elem set, name "list.field" as the Arrow
// reader names it).
type unsignedColumn struct {
	name  string
	index []int // reflect field index path
	elem  []int // in the list's structs, when index is a list's
}

// unsignedCheckOf is the check of the rows of T read from a file of
// schema got.
func unsignedCheckOf(t reflect.Type, got *parquet.Schema) unsignedCheck {
	isInt := func(f field) bool { return f.kind == kInt64 || f.kind == kTimestamp }
	var u unsignedCheck
	for _, f := range planOf(t).fields {
		if isInt(f) && unsigned64(got, f.name) {
			u.cols = append(u.cols, unsignedColumn{name: f.name, index: f.index})
		}
		if f.kind != kStructList {
			continue
		}
		for _, e := range f.elem.fields {
			for _, path := range elemLeaves(got, f, e) {
				if isInt(e) && unsigned64(got, path...) {
					u.cols = append(u.cols, unsignedColumn{name: f.name + "." + e.name, index: f.index, elem: e.index})
				}
			}
		}
	}
	return u
}

// unsigned64 reports whether the leaf of s at path is an unsigned 64-bit
// integer column (UBIGINT).
func unsigned64(s *parquet.Schema, path ...string) bool {
	leaf, ok := s.Lookup(path...)
	return ok && leaf.Node.Type().Kind() == parquet.Int64 && UnsignedInt(leaf.Node.Type())
}

// elemLeaves are the paths of got's leaves that hold field e of the
// structs of f, a list: "list.list.element.e" (LIST) or another nesting,
// under f's name and ending in e's.
func elemLeaves(got *parquet.Schema, f, e field) [][]string {
	var out [][]string
	for _, path := range got.Columns() {
		if len(path) > 1 && path[0] == f.name && path[len(path)-1] == e.name {
			out = append(out, path)
		}
	}
	return out
}

// UnsignedInt reports whether a Parquet integer column's type t is
// unsigned: INT(n,false) (DuckDB's UTINYINT to UBIGINT, Arrow's and
// parquet-go's uint8 to uint64; parquet-go gives a writer's UINT_n
// converted type, from before logical types, as that too). Its values are
// stored as the bits of signed ones: a UINTEGER's 2^32-1 is an INT32 -1,
// a UBIGINT's 2^64-1 an INT64 -1, which is not what they hold.
func UnsignedInt(t parquet.Type) bool {
	lt := t.LogicalType()
	if lt == nil {
		return false
	}
	it, ok := lt.Value.(*format.IntType)
	return ok && !it.IsSigned
}

// checkUnsigned checks rows, the next ones of the file, for a value of
// u's columns past int64 (a negative one, as read): it returns how many
// rows precede the first such value, and an IntRangeError placing it.
func checkUnsigned[T any](u *unsignedCheck, rows []T) (int, error) {
	if len(u.cols) == 0 {
		return len(rows), nil
	}
	for i := range rows {
		v := reflect.ValueOf(&rows[i]).Elem()
		for _, c := range u.cols {
			f, x := v.FieldByIndex(c.index), reflect.Value{}
			if c.elem == nil {
				x = negative(f)
			}
			for j := 0; c.elem != nil && j < f.Len() && !x.IsValid(); j++ {
				x = negative(f.Index(j).FieldByIndex(c.elem))
			}
			if x.IsValid() {
				return i, &IntRangeError{valueAt: valueAt{Column: c.name, Row: u.row + int64(i)}, Value: uint64(x.Int())}
			}
		}
	}
	u.row += int64(len(rows))
	return len(rows), nil
}

// negative is v, an int64 or a pointer to one, when it holds a negative
// value, else the zero Value.
func negative(v reflect.Value) reflect.Value {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return reflect.Value{}
		}
		v = v.Elem()
	}
	if v.Int() < 0 {
		return v
	}
	return reflect.Value{}
}
