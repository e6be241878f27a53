package rowio

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/infohash/infohash/internal/fieldaddr"
)

// columnAppender appends one column of n rows, laid out one after another
// from rows, to the builder it was made for.
type columnAppender func(rows rowAddr, n int)

// appenders returns an appender per field of p, each bound to its builder
// in bs (a record builder's, which keeps its builders, nested ones
// included, for its lifetime). They read the fields at the offsets the
// plan resolved (fieldptr.go), and append as reflect's IsZero and Elem
// would decide: a nil pointer, or the zero value of an optional field (a
// nil slice, "", 0, false, an all-zero array), is null.
func (p *plan) appenders(bs []array.Builder) []columnAppender {
	out := make([]columnAppender, len(p.fields))
	for i := range p.fields {
		out[i] = p.fields[i].appender(bs[i], p.size)
	}
	return out
}

// appendRows appends the n rows at rows, a column at a time.
func appendRows(as []columnAppender, rows rowAddr, n int) {
	for _, a := range as {
		a(rows, n)
	}
}

// appender is f's appender into b, for rows size bytes apart: the
// builder's concrete type, the field's Go type and its null rule are
// settled here, once.
func (f *field) appender(b array.Builder, size uintptr) columnAppender {
	switch f.kind {
	case kString:
		return valueAppender[string](b.(*array.StringBuilder), f, size)
	case kBool:
		return valueAppender[bool](b.(*array.BooleanBuilder), f, size)
	case kInt8:
		return valueAppender[int8](b.(*array.Int8Builder), f, size)
	case kInt32:
		return valueAppender[int32](b.(*array.Int32Builder), f, size)
	case kInt64:
		return valueAppender[int64](b.(*array.Int64Builder), f, size)
	case kTimestamp: // an int64 field: arrow.Timestamp is an int64
		return valueAppender[arrow.Timestamp](b.(*array.TimestampBuilder), f, size)
	case kFloat64: // optional: -0 == 0 is null, as IsZero has it since Go 1.22
		return valueAppender[float64](b.(*array.Float64Builder), f, size)
	case kFixed:
		fb, w := b.(*array.FixedSizeBinaryBuilder), f.width
		return nullable(f, size, func(a rowAddr) bool { return allZero(fieldaddr.Bytes(a, w)) },
			func(a rowAddr) { fb.Append(fieldaddr.Bytes(a, w)) }, fb.AppendNull)
	case kBinary:
		bb := b.(*array.BinaryBuilder)
		return nullable(f, size, nilSlice, func(a rowAddr) { bb.Append(*fieldaddr.At[[]byte](a)) }, bb.AppendNull)
	case kStringList:
		lb := b.(*array.ListBuilder)
		sb := lb.ValueBuilder().(*array.StringBuilder)
		return nullable(f, size, nilSlice, func(a rowAddr) {
			lb.Append(true)
			for _, s := range *fieldaddr.At[[]string](a) {
				sb.Append(s)
			}
		}, lb.AppendNull)
	case kStructList:
		lb := b.(*array.ListBuilder)
		sb := lb.ValueBuilder().(*array.StructBuilder)
		fbs := make([]array.Builder, sb.NumField())
		for j := range fbs {
			fbs[j] = sb.FieldBuilder(j)
		}
		elems := f.elem.appenders(fbs)
		return nullable(f, size, nilSlice, func(a rowAddr) {
			lb.Append(true)
			data, n := fieldaddr.Slice(a)
			for range n {
				sb.Append(true)
			}
			appendRows(elems, data, n)
		}, lb.AppendNull)
	}
	panic("rowio: unknown kind")
}

// valueBuilder is an Arrow builder of values of Go type V.
type valueBuilder[V any] interface {
	Append(V)
	AppendNull()
	Reserve(int)
}

// valueAppender appends field f, of type V or *V, to b, having reserved
// room for the column's values (one allocation a buffer, not a doubling
// every so many rows).
func valueAppender[V comparable](b valueBuilder[V], f *field, size uintptr) columnAppender {
	off := f.offset
	switch {
	case f.ptr:
		return func(rows rowAddr, n int) {
			b.Reserve(n)
			for i := range n {
				if p := *fieldaddr.At[*V](fieldAddr(rows, i, size, off)); p != nil {
					b.Append(*p)
				} else {
					b.AppendNull()
				}
			}
		}
	case f.optional:
		var zero V
		return func(rows rowAddr, n int) {
			b.Reserve(n)
			for i := range n {
				if v := *fieldaddr.At[V](fieldAddr(rows, i, size, off)); v != zero {
					b.Append(v)
				} else {
					b.AppendNull()
				}
			}
		}
	}
	return func(rows rowAddr, n int) {
		b.Reserve(n)
		for i := range n {
			b.Append(*fieldaddr.At[V](fieldAddr(rows, i, size, off)))
		}
	}
}

// nullable appends field f with put, given the address of its value
// (through the pointer of a pointer field), or with null where the field
// is null: a nil pointer, or an optional value that isZero.
func nullable(f *field, size uintptr, isZero func(rowAddr) bool, put func(rowAddr), null func()) columnAppender {
	off := f.offset
	switch {
	case f.ptr:
		return func(rows rowAddr, n int) {
			for i := range n {
				if p := *fieldaddr.At[rowAddr](fieldAddr(rows, i, size, off)); p != nil {
					put(p)
				} else {
					null()
				}
			}
		}
	case f.optional:
		return func(rows rowAddr, n int) {
			for i := range n {
				if a := fieldAddr(rows, i, size, off); !isZero(a) {
					put(a)
				} else {
					null()
				}
			}
		}
	}
	return func(rows rowAddr, n int) {
		for i := range n {
			put(fieldAddr(rows, i, size, off))
		}
	}
}

// nilSlice reports whether the slice field at a is nil.
func nilSlice(a rowAddr) bool {
	data, _ := fieldaddr.Slice(a)
	return data == nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
