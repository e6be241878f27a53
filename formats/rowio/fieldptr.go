package rowio

import "unsafe"

// The Arrow writer (arrow_write.go) reads the fields of rows by address,
// with no reflection per row: plan.collect resolves each field's byte
// offset in its row struct once per type (the sum of reflect's
// StructField.Offset along the field's index path, every step a struct
// held by value), and kindOf fixes the Go type the field is read as
// (int64 for a reflect.Int64, and so on: same size, same layout). This
// file is the only place in rowio that makes pointers out of addresses
// and offsets; TestFieldAddresses holds the address of every field of
// every row type, nested struct lists included, to reflect's.

// rowAddr is the address of a row struct (or of a slice's first element,
// or of one field).
type rowAddr unsafe.Pointer

// rowsAddr is the address of rows' first element (nil if it has none).
func rowsAddr[T any](rows []T) rowAddr { return rowAddr(unsafe.SliceData(rows)) }

// fieldAddr is the address of the field off bytes into row i of the rows
// laid out size bytes apart from rows (i < their number).
func fieldAddr(rows rowAddr, i int, size, off uintptr) rowAddr {
	return rowAddr(unsafe.Add(unsafe.Pointer(rows), uintptr(i)*size+off))
}

// fieldAt is the field of type V at a.
func fieldAt[V any](a rowAddr) *V { return (*V)(unsafe.Pointer(a)) }

// bytesAt is the [n]byte field at a, as a slice of it (not a copy).
func bytesAt(a rowAddr, n int) []byte { return unsafe.Slice((*byte)(unsafe.Pointer(a)), n) }

// sliceAt is the slice field at a: the address of its first element (nil
// for a nil slice) and its length. Every slice header has the layout of
// a []byte's, whatever the element type.
func sliceAt(a rowAddr) (rowAddr, int) {
	s := *(*[]byte)(unsafe.Pointer(a))
	return rowAddr(unsafe.SliceData(s)), len(s)
}
