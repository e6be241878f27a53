package rowio

import (
	"fmt"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// CheckSchema verifies that every required leaf column of want is in got
// with the same physical type, but for an integer stored in the other
// width (otherWidth), and that each column of got read into a field of
// want has a logical type whose values the field reads with their
// meaning (meaningError: a DATE is no attempt count). An all-null column
// (IsNullColumn) is read as nulls into a field that may be null, and
// refused for a required one.
func CheckSchema(want, got *parquet.Schema) error {
	for _, path := range want.Columns() {
		wl, _ := want.Lookup(path...)
		gl, ok := got.Lookup(path...)
		if !ok {
			if isOptionalPath(want, path) {
				continue
			}
			return fmt.Errorf("missing required column %q", joinPath(path))
		}
		// An all-null column (NULL: pyarrow's null type) has no value
		// to misread: a field that may be null reads it as nulls, a
		// required one (no null to hold) refuses it.
		if IsNullColumn(gl.Node.Type()) {
			if isOptionalPath(want, path) {
				continue
			}
			return fmt.Errorf("column %q is NULL (no values), want %s", joinPath(path), wantName(wl.Node.Type()))
		}
		if repeats(got, path) > repeats(want, path) {
			return fmt.Errorf("column %q is REPEATED, want one value a row", joinPath(path))
		}
		if wk, gk := wl.Node.Type().Kind(), gl.Node.Type().Kind(); wk != gk && !otherWidth(wl.Node.Type(), gl.Node.Type()) {
			return fmt.Errorf("column %q is %s, want %s", joinPath(path), gk, wk)
		}
		if wl.Node.Type().Kind() == parquet.FixedLenByteArray && wl.Node.Type().Length() != gl.Node.Type().Length() {
			return fmt.Errorf("column %q is FIXED_LEN_BYTE_ARRAY(%d), want (%d)", joinPath(path), gl.Node.Type().Length(), wl.Node.Type().Length())
		}
		if err := meaningError(path, wl.Node.Type(), gl.Node.Type()); err != nil {
			return err
		}
	}
	return nil
}

// IsNullColumn reports whether t, a leaf column's type, is Parquet's
// NULL logical type: a column whose every value is null (pyarrow writes
// an all-null column so, stored as an INT32 with no values).
func IsNullColumn(t parquet.Type) bool {
	_, ok := logicalOf(t).(*format.NullType)
	return ok
}

// otherWidth reports whether got, a column of an integer of the other
// width than want's field (INT32 and INT64), may be read into it: both
// plain integers (no logical type, or an INTEGER one), the field no
// TIMESTAMP (no time in ms fits an INT32). DuckDB writes the INTEGER and
// BIGINT an analyst's query gives (a literal, a count(*)), which the
// Arrow reader takes too. parquet-go converts the value (an unsigned one
// by value); a value past a narrower field is refused by value
// (narrowCheck, unsignedCheck), never cut to its low bits. Refused, it
// was wrong schema ("column "attempt" is INT64, want INT32"). A 32-bit
// unsigned column (UINTEGER) for an int64 field stays refused:
// parquet-go widens its bits as a signed value's (2^32-1 as -1).
func otherWidth(want, got parquet.Type) bool {
	plainInt := func(t parquet.Type) bool {
		if k := t.Kind(); k != parquet.Int32 && k != parquet.Int64 {
			return false
		}
		if lt := t.LogicalType(); lt != nil && lt.Value != nil {
			_, ok := lt.Value.(*format.IntType)
			return ok
		}
		return t.ConvertedType() == nil || isIntConverted(*t.ConvertedType())
	}
	uint32Col := got.Kind() == parquet.Int32 && UnsignedInt(got) && !narrowerUnsigned(got)
	return plainInt(want) && plainInt(got) && !(want.Kind() == parquet.Int64 && uint32Col)
}

// narrowerUnsigned reports whether t, an unsigned INT32 column, holds
// values of 8 or 16 bits (UTINYINT, USMALLINT), which an INT32 holds as
// they are.
func narrowerUnsigned(t parquet.Type) bool {
	if lt := t.LogicalType(); lt != nil && lt.Value != nil {
		it, ok := lt.Value.(*format.IntType)
		return ok && it.BitWidth < 32
	}
	c := t.ConvertedType()
	return c != nil && (*c == deprecated.Uint8 || *c == deprecated.Uint16)
}

// isIntConverted reports whether c is one of the integer converted types.
func isIntConverted(c deprecated.ConvertedType) bool {
	switch c {
	case deprecated.Int8, deprecated.Int16, deprecated.Int32, deprecated.Int64,
		deprecated.Uint8, deprecated.Uint16, deprecated.Uint32, deprecated.Uint64:
		return true
	}
	return false
}

func isOptionalPath(s *parquet.Schema, path []string) bool {
	for _, n := range pathNodes(s, path) {
		if n.Optional() || n.Repeated() {
			return true
		}
	}
	return false
}

// repeats counts the repeated nodes on path in s (its maximum repetition
// level): parquet-go reads a column repeated more often than the row type's
// field as the field's first value a row, dropping the others.
func repeats(s *parquet.Schema, path []string) int {
	r := 0
	for _, n := range pathNodes(s, path) {
		if n.Repeated() {
			r++
		}
	}
	return r
}

// pathNodes returns the nodes of s along path, as far as s has them.
func pathNodes(s *parquet.Schema, path []string) []parquet.Node {
	var nodes []parquet.Node
	var n parquet.Node = s
	for _, p := range path {
		var next parquet.Node
		for _, f := range n.Fields() {
			if f.Name() == p {
				next = f
			}
		}
		if next == nil {
			break
		}
		nodes = append(nodes, next)
		n = next
	}
	return nodes
}

func joinPath(p []string) string {
	s := ""
	for i, e := range p {
		if i > 0 {
			s += "."
		}
		s += e
	}
	return s
}
