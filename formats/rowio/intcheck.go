package rowio

import (
	"reflect"

	"github.com/parquet-go/parquet-go"
)

// IntCheck refuses, by value, the integers of a Parquet file past the
// fields of T they are read into, for a reader that reads the file's rows
// with parquet-go itself rather than with Reader: an unsigned column's
// value past an int64 or int32 field (parquet-go reads its bits: a
// UINTEGER's 2^32-1 as -1), an INT32 column's past an int8 field
// (parquet-go keeps its low byte: 300 as 44), an INT64 column's past an
// int32 or int8 field (parquet-go keeps its low bits: 2^40 as 0). Reader
// makes the same checks (unsignedCheck, narrowCheck), but for the last:
// it refuses an INT64 column for such a field (CheckSchema).
//
// It sees every row the reader reads, in the file's order: Check is given
// each batch just read. It costs nothing for a file whose columns hold
// only what T's fields do (T's own schema).
type IntCheck[T any] struct {
	unsigned unsignedCheck
	narrow   *narrowCheck
}

// NewIntCheck is the check of the rows of T read from pf, from its first
// row. Close releases it.
func NewIntCheck[T any](pf *parquet.File) *IntCheck[T] {
	t := reflect.TypeFor[T]()
	return &IntCheck[T]{unsigned: unsignedCheckOf(t, pf.Schema()), narrow: narrowCheckOf(t, pf)}
}

// Check checks rows, the next ones read from the file, and returns how
// many rows precede the first value past its field and an
// *IntRangeError placing it ('column "attempt" row 3: 4294967295 is
// outside int32', the row counted from the file's first, which is row
// 1); len(rows) and nil when there is none.
func (c *IntCheck[T]) Check(rows []T) (int, error) {
	return checkInts(&c.unsigned, c.narrow, rows)
}

// Close releases the check's second reader, if it has one.
func (c *IntCheck[T]) Close() { c.narrow.close() }

// checkInts checks rows, the next ones read from a Parquet file, for a
// value past its field (unsignedCheck, narrowCheck): it returns how many
// rows precede the first, and the error placing it.
func checkInts[T any](u *unsignedCheck, n *narrowCheck, rows []T) (int, error) {
	k, err := checkUnsigned(u, rows)
	if k2, err2 := n.check(len(rows)); err2 != nil && (err == nil || k2 < k) {
		return k2, err2
	}
	return k, err
}

// OverflowColumns names the top-level columns of a file of schema s whose
// values may be past the int8, int32 or int64 fields of T they are read
// into (as IntCheck decides: a UINTEGER or any INT64 for an int32,
// anything but a TINYINT for an int8, an unsigned 64-bit column for an
// int64), for a reader that reads such a column by value in a slower way.
func OverflowColumns[T any](s *parquet.Schema) []string {
	var out []string
	for _, f := range planOf(reflect.TypeFor[T]()).fields {
		switch f.kind {
		case kInt8, kInt32:
			if mayOverflow(s, []string{f.name}, f.kind) {
				out = append(out, f.name)
			}
		case kInt64, kTimestamp:
			if unsigned64(s, f.name) {
				out = append(out, f.name)
			}
		}
	}
	return out
}
