package rowio

import (
	"reflect"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// appendRow appends struct value v to the builders of p's fields.
func (p *plan) appendRow(bs []array.Builder, v reflect.Value) {
	for i := range p.fields {
		p.fields[i].append(bs[i], v.FieldByIndex(p.fields[i].index))
	}
}

func (f *field) append(b array.Builder, v reflect.Value) {
	if f.optional && v.IsZero() {
		b.AppendNull()
		return
	}
	if f.ptr {
		v = v.Elem()
	}
	switch f.kind {
	case kFixed:
		buf := make([]byte, f.width)
		reflect.Copy(reflect.ValueOf(buf), v)
		b.(*array.FixedSizeBinaryBuilder).Append(buf)
	case kBinary:
		b.(*array.BinaryBuilder).Append(v.Bytes())
	case kString:
		b.(*array.StringBuilder).Append(v.String())
	case kBool:
		b.(*array.BooleanBuilder).Append(v.Bool())
	case kInt8:
		b.(*array.Int8Builder).Append(int8(v.Int()))
	case kInt32:
		b.(*array.Int32Builder).Append(int32(v.Int()))
	case kInt64:
		b.(*array.Int64Builder).Append(v.Int())
	case kTimestamp:
		b.(*array.TimestampBuilder).Append(arrow.Timestamp(v.Int()))
	case kFloat64:
		b.(*array.Float64Builder).Append(v.Float())
	case kStringList:
		lb := b.(*array.ListBuilder)
		lb.Append(true)
		sb := lb.ValueBuilder().(*array.StringBuilder)
		for i := 0; i < v.Len(); i++ {
			sb.Append(v.Index(i).String())
		}
	case kStructList:
		lb := b.(*array.ListBuilder)
		lb.Append(true)
		sb := lb.ValueBuilder().(*array.StructBuilder)
		fbs := make([]array.Builder, sb.NumField())
		for j := range fbs {
			fbs[j] = sb.FieldBuilder(j)
		}
		for i := 0; i < v.Len(); i++ {
			sb.Append(true)
			f.elem.appendRow(fbs, v.Index(i))
		}
	}
}
