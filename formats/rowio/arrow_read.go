package rowio

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// getter copies row i of an Arrow column into a struct field.
type getter func(col arrow.Array, i int, dst reflect.Value) error

// binding maps one struct field to one column of an incoming schema
// (col < 0: the column is absent and the field keeps its zero value).
type binding struct {
	f   *field
	col int
	get getter
}

// bind matches p's fields against schema s by name, accepting the
// conversions other tools need: binary for fixed-size binary (length
// checked per value: a value of another length is an error, never cut
// short, so a reader that takes a 32-byte v2 infohash reads the column as
// []byte), any timestamp unit, any integer width. The []byte fields
// named in text also take a string column, read as its values' bytes,
// and the string fields named in text a binary one, read as a string of
// its bytes, which the caller checks (see OpenArrowText); a field of a
// list of structs is named "list.field". An all-null column (Arrow's null
// type) reads as nulls into an optional field or a list.
func (p *plan) bind(s *arrow.Schema, text []string) ([]binding, error) {
	out := make([]binding, 0, len(p.fields))
	for i := range p.fields {
		f := &p.fields[i]
		col, err := FieldIndex(s, f.name)
		if err != nil {
			return nil, err
		}
		if col < 0 {
			if !f.optional && f.kind != kStringList && f.kind != kStructList && f.kind != kBool {
				return nil, fmt.Errorf("missing required column %q", f.name)
			}
			out = append(out, binding{f: f, col: -1})
			continue
		}
		if s.Field(col).Type.ID() == arrow.NULL && (f.optional || f.kind == kStringList || f.kind == kStructList) {
			// All null (pyarrow's null type): nulls, as Parquet's NULL
			// column reads (CheckSchema); a required field refuses it.
			out = append(out, binding{f: f, col: -1})
			continue
		}
		g, err := getterFor(f, s.Field(col).Type, text)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", f.name, err)
		}
		if f.ptr {
			g = pointerTo(g)
		}
		out = append(out, binding{f: f, col: col, get: g})
	}
	return out, nil
}

// getterFor reads a column of type t into f; text is bind's, a field of a
// list of structs named in it as "list.field".
func getterFor(f *field, t arrow.DataType, texts []string) (getter, error) {
	bad := fmt.Errorf("want %s, got %s", f.arrowType(), t)
	text := slices.Contains(texts, f.name)
	switch f.kind {
	case kFixed:
		switch t.ID() {
		case arrow.FIXED_SIZE_BINARY, arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
			w := f.width
			return func(c arrow.Array, i int, d reflect.Value) error {
				b := binaryValue(c, i)
				if len(b) != w {
					return &valueError{valueAt: valueAt{Column: f.name}, msg: fmt.Sprintf("%d bytes, want %d", len(b), w)}
				}
				reflect.Copy(d, reflect.ValueOf(b[:w]))
				return nil
			}, nil
		}
	case kBinary:
		switch t.ID() {
		case arrow.FIXED_SIZE_BINARY, arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
			var empty []byte // what an empty value reads as: nil (null), or empty for keepEmpty
			if f.keepEmpty {
				empty = []byte{}
			}
			return func(c arrow.Array, i int, d reflect.Value) error {
				d.SetBytes(append(empty, binaryValue(c, i)...))
				return nil
			}, nil
		case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
			if !text {
				break
			}
			return func(c arrow.Array, i int, d reflect.Value) error {
				d.SetBytes(append([]byte{}, c.(interface{ Value(int) string }).Value(i)...))
				return nil
			}, nil
		}
	case kString:
		if IsArrowString(t.ID()) {
			return func(c arrow.Array, i int, d reflect.Value) error {
				d.SetString(c.(interface{ Value(int) string }).Value(i))
				return nil
			}, nil
		}
		switch t.ID() {
		case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
			if !text {
				break
			}
			return func(c arrow.Array, i int, d reflect.Value) error {
				d.SetString(string(binaryValue(c, i)))
				return nil
			}, nil
		}
	case kBool:
		if t.ID() == arrow.BOOL {
			return func(c arrow.Array, i int, d reflect.Value) error {
				d.SetBool(c.(*array.Boolean).Value(i))
				return nil
			}, nil
		}
	case kInt8, kInt32, kInt64:
		if g := intGetter(t); g != nil {
			return intGetterFor(f, t, g), nil
		}
		if t.ID() == arrow.UINT64 { // by value: one past the field would wrap around to a negative one
			return uint64Getter(f), nil
		}
	case kTimestamp:
		if ts, ok := t.(*arrow.TimestampType); ok {
			div := map[arrow.TimeUnit]int64{arrow.Second: -1000, arrow.Millisecond: 1, arrow.Microsecond: 1000, arrow.Nanosecond: 1000_000}[ts.Unit]
			return func(c arrow.Array, i int, d reflect.Value) error {
				v := int64(c.(*array.Timestamp).Value(i))
				if div < 0 {
					if v > math.MaxInt64/-div || v < math.MinInt64/-div {
						// Multiplied, it would wrap around to any time at all.
						return &valueError{valueAt: valueAt{Column: f.name}, msg: fmt.Sprintf("%d s is outside the range of int64 milliseconds", v)}
					}
					v *= -div
				} else {
					v /= div
				}
				d.SetInt(v)
				return nil
			}, nil
		}
		if g := intGetter(t); g != nil {
			return func(c arrow.Array, i int, d reflect.Value) error { d.SetInt(g(c, i)); return nil }, nil
		}
		if t.ID() == arrow.UINT64 { // epoch ms, as Parquet's UBIGINT is read: by value
			return uint64Getter(f), nil
		}
	case kFloat64:
		if t.ID() == arrow.FLOAT64 {
			return func(c arrow.Array, i int, d reflect.Value) error {
				d.SetFloat(c.(*array.Float64).Value(i))
				return nil
			}, nil
		}
	case kStringList:
		if lt, ok := t.(*arrow.ListType); ok && lt.Elem().ID() == arrow.STRING {
			return func(c arrow.Array, i int, d reflect.Value) error {
				l := c.(*array.List)
				s, e := l.ValueOffsets(i)
				vals := l.ListValues().(*array.String)
				out := make([]string, 0, e-s)
				for j := s; j < e; j++ {
					out = append(out, vals.Value(int(j)))
				}
				d.Set(reflect.ValueOf(out))
				return nil
			}, nil
		}
	case kStructList:
		if lt, ok := t.(*arrow.ListType); ok {
			st, ok := lt.Elem().(*arrow.StructType)
			if !ok {
				return nil, bad
			}
			var elemText []string
			for _, n := range texts {
				if e, ok := strings.CutPrefix(n, f.name+"."); ok {
					elemText = append(elemText, e)
				}
			}
			inner, err := f.elem.bind(arrow.NewSchema(st.Fields(), nil), elemText)
			if err != nil {
				return nil, err
			}
			return func(c arrow.Array, i int, d reflect.Value) error {
				l := c.(*array.List)
				s, e := l.ValueOffsets(i)
				sv := l.ListValues().(*array.Struct)
				out := reflect.MakeSlice(d.Type(), int(e-s), int(e-s))
				for j := s; j < e; j++ {
					if err := fill(inner, sv.Field, int(j), out.Index(int(j-s))); err != nil {
						if p, ok := errors.AsType[placed](err); ok { // a field of the list's structs
							p.place().Column = f.name + "." + p.place().Column
						}
						return err
					}
				}
				d.Set(out)
				return nil
			}, nil
		}
	}
	return nil, bad
}

// valueAt is where a value of an Arrow stream is: its column (a field of a
// list of structs: "list.field") and its row in the stream, counted from
// 0 across the record batches (the reader sets it: a getter knows only
// the row in its batch, or in a list's values). Messages name the row
// counted from 1, as every message of the binary does: row 1 is the
// first.
type valueAt struct {
	Column string
	Row    int64
}

func (a *valueAt) place() *valueAt { return a }

// placed is an error about one value, which the reader places.
type placed interface {
	error
	place() *valueAt
}

// valueError is a value of an Arrow column that the field it is read
// into cannot take.
type valueError struct {
	valueAt
	msg string
}

func (e *valueError) Error() string {
	return fmt.Sprintf("column %q row %d: %s", e.Column, e.Row+1, e.msg)
}

// IntRangeError is an integer value of an Arrow column (or of a Parquet
// one: unsignedCheck, narrowCheck) outside what the integer field it is
// read into holds, at Row of the stream or file (from 0; its message
// counts from 1): a uint64 past int64, a
// uint32 or int64 past int32, an int16 past int8. A caller that bounds
// the field's values more narrowly may say so in its own words (dedup's
// hash_type).
type IntRangeError struct {
	valueAt
	Value    uint64 // the value as stored; Negative: int64(Value)
	Negative bool
	Field    string // the field's type: "int32", "int8"; "" for int64
}

func (e *IntRangeError) Error() string {
	v := strconv.FormatUint(e.Value, 10)
	if e.Negative {
		v = strconv.FormatInt(int64(e.Value), 10)
	}
	if e.Field == "" || e.Field == "int64" {
		return fmt.Sprintf("column %q row %d: %s is more than an int64 holds", e.Column, e.Row+1, v)
	}
	return fmt.Sprintf("column %q row %d: %s is outside %s", e.Column, e.Row+1, v, e.Field)
}

// intRangeError is the IntRangeError of v, a signed value, read into a
// field of kind k named name.
func intRangeError(name string, k kind, v int64) *IntRangeError {
	return &IntRangeError{valueAt: valueAt{Column: name}, Value: uint64(v), Negative: v < 0, Field: intField(k)}
}

// intBounds is the range of an integer field of kind k (epoch ms: int64).
func intBounds(k kind) (lo, hi int64) {
	switch k {
	case kInt8:
		return math.MinInt8, math.MaxInt8
	case kInt32:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

// intField names the Go type of an integer field of kind k: "" for int64.
func intField(k kind) string {
	switch k {
	case kInt8:
		return "int8"
	case kInt32:
		return "int32"
	}
	return ""
}

// pointerTo is get for a pointer field: the value goes into a new one.
func pointerTo(get getter) getter {
	return func(c arrow.Array, i int, d reflect.Value) error {
		p := reflect.New(d.Type().Elem())
		if err := get(c, i, p.Elem()); err != nil {
			return err
		}
		d.Set(p)
		return nil
	}
}

// fill sets the fields of dst from row i of the columns col(k).
func fill(bs []binding, col func(int) arrow.Array, i int, dst reflect.Value) error {
	for _, b := range bs {
		if b.col < 0 {
			continue
		}
		c := col(b.col)
		if c.IsNull(i) {
			if b.f.ptr {
				dst.FieldByIndex(b.f.index).SetZero()
			}
			continue
		}
		if err := b.get(c, i, dst.FieldByIndex(b.f.index)); err != nil {
			return err
		}
	}
	return nil
}

func binaryValue(c arrow.Array, i int) []byte {
	switch a := c.(type) {
	case *array.FixedSizeBinary:
		return a.Value(i)
	case *array.Binary:
		return a.Value(i)
	case *array.LargeBinary:
		return a.Value(i)
	case *array.BinaryView:
		return a.Value(i)
	}
	return nil
}

// IsArrowString reports whether an Arrow column of type t holds UTF-8
// text: utf8, large_utf8, or utf8_view (Polars writes its strings so).
func IsArrowString(t arrow.Type) bool {
	return t == arrow.STRING || t == arrow.LARGE_STRING || t == arrow.STRING_VIEW
}

// IsArrowBinary reports whether an Arrow column of type t holds bytes:
// fixed_size_binary, binary, large_binary or binary_view (Polars').
func IsArrowBinary(t arrow.Type) bool {
	return t == arrow.FIXED_SIZE_BINARY || t == arrow.BINARY || t == arrow.LARGE_BINARY || t == arrow.BINARY_VIEW
}

// uint64Getter reads a uint64 column into f, an integer (or epoch ms)
// field, by value: one past what f holds is an IntRangeError, never the
// negative value (or the low bits) it would wrap around to.
func uint64Getter(f *field) getter {
	_, hi := intBounds(f.kind)
	return func(c arrow.Array, i int, d reflect.Value) error {
		v := c.(*array.Uint64).Value(i)
		if v > uint64(hi) {
			return &IntRangeError{valueAt: valueAt{Column: f.name}, Value: v, Field: intField(f.kind)}
		}
		d.SetInt(int64(v))
		return nil
	}
}

// intGetterFor reads a column of type t, whose values g gives, into f, an
// integer field: by value when t holds values past f's (an int64 or a
// uint32 column for an int32 field), which are an IntRangeError, never
// the low bits reflect's SetInt would keep; as they are otherwise, the
// common case, at no cost.
func intGetterFor(f *field, t arrow.DataType, g func(arrow.Array, int) int64) getter {
	lo, hi := intBounds(f.kind)
	if tlo, thi := arrowIntBounds(t.ID()); tlo >= lo && thi <= hi {
		return func(c arrow.Array, i int, d reflect.Value) error { d.SetInt(g(c, i)); return nil }
	}
	return func(c arrow.Array, i int, d reflect.Value) error {
		v := g(c, i)
		if v < lo || v > hi {
			return intRangeError(f.name, f.kind, v)
		}
		d.SetInt(v)
		return nil
	}
}

// arrowIntBounds is the range of the values of an Arrow integer type
// intGetter reads.
func arrowIntBounds(t arrow.Type) (lo, hi int64) {
	switch t {
	case arrow.INT8:
		return math.MinInt8, math.MaxInt8
	case arrow.INT16:
		return math.MinInt16, math.MaxInt16
	case arrow.INT32:
		return math.MinInt32, math.MaxInt32
	case arrow.UINT8:
		return 0, math.MaxUint8
	case arrow.UINT16:
		return 0, math.MaxUint16
	case arrow.UINT32:
		return 0, math.MaxUint32
	}
	return math.MinInt64, math.MaxInt64
}

func intGetter(t arrow.DataType) func(arrow.Array, int) int64 {
	switch t.ID() {
	case arrow.INT8:
		return func(c arrow.Array, i int) int64 { return int64(c.(*array.Int8).Value(i)) }
	case arrow.INT16:
		return func(c arrow.Array, i int) int64 { return int64(c.(*array.Int16).Value(i)) }
	case arrow.INT32:
		return func(c arrow.Array, i int) int64 { return int64(c.(*array.Int32).Value(i)) }
	case arrow.INT64:
		return func(c arrow.Array, i int) int64 { return c.(*array.Int64).Value(i) }
	case arrow.UINT8:
		return func(c arrow.Array, i int) int64 { return int64(c.(*array.Uint8).Value(i)) }
	case arrow.UINT16:
		return func(c arrow.Array, i int) int64 { return int64(c.(*array.Uint16).Value(i)) }
	case arrow.UINT32:
		return func(c arrow.Array, i int) int64 { return int64(c.(*array.Uint32).Value(i)) }
	}
	return nil
}
