package rowio

import "github.com/infohash/infohash/internal/fieldaddr"

// The Arrow writer (arrow_write.go) reads the fields of rows by address,
// with no reflection per row (internal/fieldaddr): plan.collect resolves
// each field's byte offset in its row struct once per type (the sum of
// reflect's StructField.Offset along the field's index path, every step
// a struct held by value), and kindOf fixes the Go type the field is
// read as (int64 for a reflect.Int64, and so on: same size, same
// layout). TestFieldAddresses holds the address of every field of every
// row type, nested struct lists included, to reflect's.

// rowAddr is the address of a row struct (or of a slice's first element,
// or of one field).
type rowAddr = fieldaddr.Addr

// fieldAddr is the address of the field off bytes into row i of the rows
// laid out size bytes apart from rows (i < their number).
func fieldAddr(rows rowAddr, i int, size, off uintptr) rowAddr {
	return fieldaddr.Add(rows, uintptr(i)*size+off)
}
