// Package fieldaddr reads the fields of Go structs by address, for the
// encoders that write rows a column or a field at a time (formats/rowio's
// Arrow writer, formats/textenc's csv and jsonl): each resolves a
// field's byte offset in its row type once, from reflect's
// StructField.Offset along the field's index path, then reads the field
// of every row at row address + offset, with no reflection per row.
//
// It is the one place those encoders make pointers out of addresses and
// offsets. A caller reads a field as a Go type of the field's size and
// layout (int64 for a reflect.Int64, []byte for any slice header), and
// holds its offsets to reflect's addresses in a test (each package's
// TestFieldAddresses).
package fieldaddr

import (
	"reflect"
	"unsafe"
)

// Addr is the address of a row struct, of a slice's first element, or of
// one field. Being an unsafe.Pointer, it keeps what it points into alive.
type Addr unsafe.Pointer

// OfSlice is the address of rows' first element (nil if it has none).
func OfSlice[T any](rows []T) Addr { return Addr(unsafe.SliceData(rows)) }

// Of is the address of row.
func Of[T any](row *T) Addr { return Addr(unsafe.Pointer(row)) }

// Add is the address off bytes past a: a field of the struct at a, or an
// element of the slice whose first element is at a. off must stay
// within what a points into.
func Add(a Addr, off uintptr) Addr { return Addr(unsafe.Add(unsafe.Pointer(a), off)) }

// At is the value of type V at a.
func At[V any](a Addr) *V { return (*V)(unsafe.Pointer(a)) }

// Bytes is the [n]byte at a, as a slice of it (not a copy).
func Bytes(a Addr, n int) []byte { return unsafe.Slice((*byte)(unsafe.Pointer(a)), n) }

// Slice is the slice at a: the address of its first element (nil for a
// nil slice) and its length. Every slice header has the layout of a
// []byte's, whatever the element type.
func Slice(a Addr) (Addr, int) {
	s := *(*[]byte)(unsafe.Pointer(a))
	return Addr(unsafe.SliceData(s)), len(s)
}

// String is b as a string, without a copy: for a call that reads it and
// keeps nothing of it, before b changes.
func String(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// Value is the value of type t at a, by reflection (addressable): for
// the rare field kinds a caller has no typed reader for.
func Value(t reflect.Type, a Addr) reflect.Value { return reflect.NewAt(t, unsafe.Pointer(a)).Elem() }
