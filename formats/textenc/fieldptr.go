package textenc

import "github.com/infohash/infohash/internal/fieldaddr"

// The encoders read the fields of rows by address, with no reflection per
// row (internal/fieldaddr): fieldsOf resolves each field's byte offset in
// its row struct once per encoder (the sum of reflect's
// StructField.Offset along the field's index path, every step a struct
// held by value), and resolve fixes the Go type the field is read as
// (int32 for a reflect.Int32, and so on: same size, same layout).
// TestFieldAddresses holds the address of every field of every row type,
// struct list elements included, to reflect's.

// addr is the address of a row struct, of a slice's first element, or of
// one field.
type addr = fieldaddr.Addr
