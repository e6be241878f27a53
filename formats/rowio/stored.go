package rowio

import (
	"fmt"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// StoredTypeError says, as one line, that the leaf column at path of pf is
// not stored as its logical type is read: parquet-go's schema shows a
// column by its logical (or converted) type, and decodes its pages as
// that type's physical one, whatever the footer stores. A TIMESTAMP is an
// INT64 there: a crafted footer's INT32 one was decoded as INT64s
// ("corrupt Parquet: ... cannot decode INT64 from input of size 4", or
// two values read as one); a STRING is a BYTE_ARRAY, a DATE an INT32. It
// is nil when the column is stored as it is read, or pf has no such leaf.
// Column names are as read (see OpenParquetFold).
func StoredTypeError(pf *parquet.File, path ...string) error {
	col, ok := pf.Schema().Lookup(path...)
	if !ok || !col.Node.Leaf() {
		return nil
	}
	e := footerElement(pf.Metadata().Schema, path)
	if e == nil || !e.Type.Valid {
		return nil
	}
	t := col.Node.Type()
	if IsNullColumn(t) { // no values to decode, whatever it is stored as (CheckSchema)
		return nil
	}
	stored := parquet.Kind(e.Type.V)
	if stored == t.Kind() && (stored != parquet.FixedLenByteArray || int(e.TypeLength.V) == t.Length()) {
		return nil
	}
	is := t.String()
	if lt := t.LogicalType(); lt != nil && lt.Value != nil {
		is = lt.Value.String()
	}
	name, _, _ := strings.Cut(is, "(")
	a := "a"
	if name != "" && strings.ContainsRune("AEIO", rune(name[0])) {
		a = "an"
	}
	return fmt.Errorf("column %q is %s stored as %s, want %s %s (%s)", joinPath(path), is,
		kindName(stored, int(e.TypeLength.V)), a, name, kindName(t.Kind(), t.Length()))
}

// kindName names a physical type as the footer gives it, with its length
// for a FIXED_LEN_BYTE_ARRAY.
func kindName(k parquet.Kind, length int) string {
	if k == parquet.FixedLenByteArray {
		return fmt.Sprintf("%s(%d)", k, length)
	}
	return k.String()
}

// footerElement is the element of schema (a footer's, depth-first, the
// root first) at path: nil when there is none.
func footerElement(schema []format.SchemaElement, path []string) *format.SchemaElement {
	i := 0
	for _, name := range path {
		next, j := -1, i+1
		for c := 0; c < int(schema[i].NumChildren.V) && j < len(schema); c++ {
			if schema[j].Name == name {
				next = j
				break
			}
			for left := 1; left > 0 && j < len(schema); j++ { // past j's subtree
				left += int(schema[j].NumChildren.V) - 1
			}
		}
		if next < 0 {
			return nil
		}
		i = next
	}
	return &schema[i]
}
