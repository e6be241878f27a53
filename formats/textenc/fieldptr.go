package textenc

import (
	"reflect"
	"unsafe"
)

// The encoders read the fields of rows by address, with no reflection per
// row: fieldsOf resolves each field's byte offset in its row struct once
// per encoder (the sum of reflect's StructField.Offset along the field's
// index path, every step a struct held by value), and resolve fixes the
// Go type the field is read as (int32 for a reflect.Int32, and so on:
// same size, same layout). This file is the only place in textenc that
// makes pointers out of addresses and offsets; TestFieldAddresses holds
// the address of every field of every row type, struct list elements
// included, to reflect's.
//
// It is a copy of the few lines rowio's Arrow writer has (rowio's
// fieldptr.go): textenc cannot use them without rowio exporting unsafe
// helpers, and importing rowio would bring Arrow and parquet-go into it.

// addr is the address of a row struct, of a slice's first element, or of
// one field.
type addr unsafe.Pointer

// rowsAddr is the address of rows' first element (nil if it has none).
func rowsAddr[T any](rows []T) addr { return addr(unsafe.SliceData(rows)) }

// rowAddr is the address of row.
func rowAddr[T any](row *T) addr { return addr(unsafe.Pointer(row)) }

// fieldAddr is the address off bytes past a: a field of the struct at a,
// or the element of a slice off bytes into it.
func fieldAddr(a addr, off uintptr) addr { return addr(unsafe.Add(unsafe.Pointer(a), off)) }

// at is the value of type V at a.
func at[V any](a addr) *V { return (*V)(unsafe.Pointer(a)) }

// bytesAt is the [n]byte at a, as a slice of it (not a copy).
func bytesAt(a addr, n int) []byte { return unsafe.Slice((*byte)(unsafe.Pointer(a)), n) }

// sliceAt is the slice at a: the address of its first element (nil for a
// nil slice) and its length. Every slice header has the layout of a
// []byte's, whatever the element type.
func sliceAt(a addr) (addr, int) {
	s := *(*[]byte)(unsafe.Pointer(a))
	return addr(unsafe.SliceData(s)), len(s)
}

// viewString is b as a string, without a copy: for a call that reads it
// and keeps nothing of it, before b changes.
func viewString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// reflectAt is the value of type t at a, by reflection (addressable).
func reflectAt(t reflect.Type, a addr) reflect.Value {
	return reflect.NewAt(t, unsafe.Pointer(a)).Elem()
}
