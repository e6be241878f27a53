package rowio

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/apache/arrow/go/v17/arrow"
)

// kind is how one struct field maps to an Arrow column.
type kind int

const (
	kFixed kind = iota // [N]byte → fixed_size_binary[N]
	kBinary
	kString
	kBool
	kInt8
	kInt32
	kInt64
	kTimestamp // int64 milliseconds → timestamp[ms, UTC]
	kFloat64
	kStringList
	kStructList
)

// field is one column of a row type, derived from its parquet struct tag.
type field struct {
	name     string
	index    []int   // reflect field index path (through embedded structs)
	offset   uintptr // byte offset in the row struct (fieldptr.go)
	kind     kind
	width    int // for kFixed
	optional bool
	ptr      bool  // a pointer field (*bool): nil is null
	elem     *plan // for kStructList
	// keepEmpty: an optional []byte column whose empty value is a known
	// value, not null (emptyBytesColumns).
	keepEmpty bool
}

// emptyBytesColumns are the optional []byte columns where nil alone is
// null and an empty value is a value: name_raw, whose empty value is a
// torrent's empty name. Elsewhere an empty optional []byte is null (a v2
// hash, a node ID or an info dictionary is never empty).
var emptyBytesColumns = []string{"name_raw"}

// plan is the Arrow mapping of a row struct type.
type plan struct {
	typ    reflect.Type
	size   uintptr // typ.Size(): rows of a slice are this many bytes apart
	fields []field
	schema *arrow.Schema
}

var plans sync.Map // reflect.Type → *plan

func planOf(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	p := &plan{typ: t, size: t.Size()}
	p.collect(t, nil, 0)
	afs := make([]arrow.Field, len(p.fields))
	for i, f := range p.fields {
		afs[i] = arrow.Field{Name: f.name, Type: f.arrowType(), Nullable: f.optional}
	}
	p.schema = arrow.NewSchema(afs, nil)
	plans.Store(t, p)
	return p
}

// collect adds the fields of struct type t, found at index path prefix
// and byte offset base in the row, to p.
func (p *plan) collect(t reflect.Type, prefix []int, base uintptr) {
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		idx := append(append([]int(nil), prefix...), i)
		tag, hasTag := sf.Tag.Lookup("parquet")
		if sf.Anonymous && sf.Type.Kind() == reflect.Struct && !hasTag {
			p.collect(sf.Type, idx, base+sf.Offset)
			continue
		}
		if !sf.IsExported() || tag == "-" {
			continue
		}
		opts := strings.Split(tag, ",")
		f := field{name: opts[0], index: idx, offset: base + sf.Offset}
		if f.name == "" {
			f.name = sf.Name
		}
		ts := false
		typ := sf.Type
		if typ.Kind() == reflect.Pointer { // nil is null, as for parquet-go
			f.optional, f.ptr, typ = true, true, typ.Elem()
		}
		for _, o := range opts[1:] {
			switch {
			case o == "optional":
				f.optional = true
			case strings.HasPrefix(o, "timestamp"):
				ts = true
			}
		}
		f.kind, f.width, f.elem = kindOf(typ, ts)
		f.keepEmpty = f.optional && f.kind == kBinary && slices.Contains(emptyBytesColumns, f.name)
		p.fields = append(p.fields, f)
	}
}

func kindOf(t reflect.Type, ts bool) (kind, int, *plan) {
	switch t.Kind() {
	case reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return kFixed, t.Len(), nil
		}
	case reflect.Slice:
		switch t.Elem().Kind() {
		case reflect.Uint8:
			return kBinary, 0, nil
		case reflect.String:
			return kStringList, 0, nil
		case reflect.Struct:
			return kStructList, 0, planOf(t.Elem())
		}
	case reflect.String:
		return kString, 0, nil
	case reflect.Bool:
		return kBool, 0, nil
	case reflect.Int8:
		return kInt8, 0, nil
	case reflect.Int32:
		return kInt32, 0, nil
	case reflect.Int64:
		if ts {
			return kTimestamp, 0, nil
		}
		return kInt64, 0, nil
	case reflect.Float64:
		return kFloat64, 0, nil
	}
	panic(fmt.Sprintf("rowio: unsupported field type %s", t))
}

func (f field) arrowType() arrow.DataType {
	switch f.kind {
	case kFixed:
		return &arrow.FixedSizeBinaryType{ByteWidth: f.width}
	case kBinary:
		return arrow.BinaryTypes.Binary
	case kString:
		return arrow.BinaryTypes.String
	case kBool:
		return arrow.FixedWidthTypes.Boolean
	case kInt8:
		return arrow.PrimitiveTypes.Int8
	case kInt32:
		return arrow.PrimitiveTypes.Int32
	case kInt64:
		return arrow.PrimitiveTypes.Int64
	case kTimestamp:
		return arrow.FixedWidthTypes.Timestamp_ms
	case kFloat64:
		return arrow.PrimitiveTypes.Float64
	case kStringList:
		return arrow.ListOf(arrow.BinaryTypes.String)
	case kStructList:
		return arrow.ListOfNonNullable(arrow.StructOf(f.elem.schema.Fields()...))
	}
	panic("rowio: unknown kind")
}

// nullBytes lists the optional []byte fields of p (top level) whose
// empty value is null.
func (p *plan) nullBytes() [][]int {
	var out [][]int
	for _, f := range p.fields {
		if f.optional && f.kind == kBinary && !f.ptr && !f.keepEmpty {
			out = append(out, f.index)
		}
	}
	return out
}

// NormalizeNulls sets empty optional []byte fields of rows to nil: the
// schema's convention is that an empty optional value is null, and
// parquet-go may hand a null back as an empty slice of a reused buffer.
// The columns whose empty value is known (emptyBytesColumns) are left as
// read: a reader clears its rows before each read, and parquet-go then
// gives nil for null and an empty slice for an empty value.
func NormalizeNulls[T any](rows []T) {
	var zero T
	idx := planOf(reflect.TypeOf(zero)).nullBytes()
	if len(idx) == 0 {
		return
	}
	for i := range rows {
		v := reflect.ValueOf(&rows[i]).Elem()
		for _, ix := range idx {
			if f := v.FieldByIndex(ix); f.Len() == 0 && !f.IsNil() {
				f.SetBytes(nil)
			}
		}
	}
}
