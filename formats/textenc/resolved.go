package textenc

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"

	"github.com/infohash/infohash/internal/fieldaddr"
)

// The encoders write a row field by field from its address: each field's
// offset and kind are resolved once, when the encoder is made (fieldsOf,
// resolve), and appendJSONAt and appendCSVAt read it as its kind's Go
// type (fieldptr.go), with no reflection and no allocation per row
// except where encoding/json escapes a string. Reading every field of
// every row by reflection (Value.Field, IsZero, Kind, Indirect) was a
// seventh of a JSON Lines export's CPU. The output is the reflective
// appendJSON's and appendCSV's byte for byte (TestGolden); a kind that
// no schema row type has (kOther: unsigned integers, lists of numbers…)
// still goes through them.

// kind is how a field is read and written.
type kind uint8

const (
	kOther   kind = iota // read by reflection: appendJSON, appendCSV
	kFixed               // [N]byte, as hex
	kBytes               // []byte, as hex
	kString              // string
	kBool                // bool
	kInt8                // int8
	kInt16               // int16
	kInt32               // int32
	kInt64               // int64 (or int)
	kTime                // int64 ms with a timestamp tag, as Time
	kFloat               // float64
	kStrings             // []string
	kStructs             // []struct, each element a JSON object
)

// elems are the fields of a struct list's element type.
type elems struct {
	fields []field
	keys   [][]byte // the fields' JSON keys (field.key)
	size   uintptr  // elements lie this many bytes apart
}

// resolve sets f's kind (and width, elem) from its type, through the
// pointer of a pointer field.
func (f *field) resolve() {
	t := f.typ
	if f.ptr {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			f.kind, f.width = kFixed, t.Len()
		}
	case reflect.Slice:
		switch t.Elem().Kind() {
		case reflect.Uint8:
			f.kind = kBytes
		case reflect.String:
			f.kind = kStrings
		case reflect.Struct:
			sub := fieldsOf(t.Elem(), nil, 0, nil)
			e := &elems{fields: sub, size: t.Elem().Size()}
			for _, s := range sub {
				e.keys = append(e.keys, s.key())
			}
			f.kind, f.elem = kStructs, e
		}
	case reflect.String:
		f.kind = kString
	case reflect.Bool:
		f.kind = kBool
	case reflect.Int8:
		f.kind = kInt8
	case reflect.Int16:
		f.kind = kInt16
	case reflect.Int32:
		f.kind = kInt32
	case reflect.Int64, reflect.Int:
		f.kind = kInt64
		if t.Size() != 8 {
			f.kind = kOther
		} else if f.ts && t.Kind() == reflect.Int64 {
			f.kind = kTime
		}
	case reflect.Float64:
		f.kind = kFloat
	}
}

// reflectAt is field f of the row at row, by reflection.
func (f *field) reflectAt(row addr) reflect.Value {
	return fieldaddr.Value(f.typ, fieldaddr.Add(row, f.offset))
}

// valueAt is the address of f's value in the row at row (through its
// pointer), or nil if f is null there: a nil pointer, or an optional
// field's zero value (nil slice, "", 0, -0.0, false, an all-zero array),
// as reflect's IsZero has it.
func (f *field) valueAt(row addr) addr {
	p := fieldaddr.Add(row, f.offset)
	if f.ptr {
		return *fieldaddr.At[addr](p)
	}
	if !f.optional {
		return p
	}
	var zero bool
	switch f.kind {
	case kFixed:
		zero = allZero(fieldaddr.Bytes(p, f.width))
	case kBytes, kStrings, kStructs:
		data, _ := fieldaddr.Slice(p)
		zero = data == nil
	case kString:
		zero = len(*fieldaddr.At[string](p)) == 0
	case kBool:
		zero = !*fieldaddr.At[bool](p)
	case kInt8:
		zero = *fieldaddr.At[int8](p) == 0
	case kInt16:
		zero = *fieldaddr.At[int16](p) == 0
	case kInt32:
		zero = *fieldaddr.At[int32](p) == 0
	case kInt64, kTime:
		zero = *fieldaddr.At[int64](p) == 0
	case kFloat:
		zero = *fieldaddr.At[float64](p) == 0
	}
	if zero {
		return nil
	}
	return p
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// appendJSONAt appends the JSON value of field f of the row at row: what
// appendJSON appends of it. nested is set for the field of a struct
// list's element, written as json.Marshal(f.value(v)) wrote it.
func (f *field) appendJSONAt(b []byte, row addr, nested bool) ([]byte, error) {
	if f.kind == kOther {
		if nested {
			j, err := json.Marshal(f.value(f.reflectAt(row)))
			return append(b, j...), err
		}
		return f.appendJSON(b, f.reflectAt(row))
	}
	p := f.valueAt(row)
	if p == nil {
		return append(b, "null"...), nil
	}
	switch f.kind {
	case kFixed:
		return appendHex(b, fieldaddr.Bytes(p, f.width)), nil
	case kBytes:
		return appendHex(b, *fieldaddr.At[[]byte](p)), nil
	case kString:
		return appendJSONString(b, *fieldaddr.At[string](p)), nil
	case kBool:
		return strconv.AppendBool(b, *fieldaddr.At[bool](p)), nil
	case kInt8:
		return strconv.AppendInt(b, int64(*fieldaddr.At[int8](p)), 10), nil
	case kInt16:
		return strconv.AppendInt(b, int64(*fieldaddr.At[int16](p)), 10), nil
	case kInt32:
		return strconv.AppendInt(b, int64(*fieldaddr.At[int32](p)), 10), nil
	case kInt64:
		return strconv.AppendInt(b, *fieldaddr.At[int64](p), 10), nil
	case kTime:
		b = appendTime(append(b, '"'), *fieldaddr.At[int64](p))
		return append(b, '"'), nil
	case kFloat:
		return appendFloat(b, *fieldaddr.At[float64](p), f.name)
	case kStrings:
		return appendJSONStrings(b, *fieldaddr.At[[]string](p)), nil
	}
	// kStructs
	data, n := fieldaddr.Slice(p)
	out, err := f.elem.appendJSON(b, data, n)
	if err != nil {
		// The reflective encoder's error, word for word (a float of an
		// element that is NaN: no schema row type has one).
		if _, rerr := json.Marshal(f.value(reflect.Indirect(f.reflectAt(row)))); rerr != nil {
			err = rerr
		}
		return b, fmt.Errorf("textenc: %s: %w", f.name, err)
	}
	return out, nil
}

// appendJSON appends the n elements at data as a JSON array of objects.
func (e *elems) appendJSON(b []byte, data addr, n int) ([]byte, error) {
	b = append(b, '[')
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendObject(b, e.fields, e.keys, fieldaddr.Add(data, uintptr(i)*e.size), true); err != nil {
			return b, err
		}
	}
	return append(b, ']'), nil
}

// appendObject appends the struct at a as one JSON object of fields,
// keyed by keys (nested: a struct list's element).
func appendObject(b []byte, fields []field, keys [][]byte, a addr, nested bool) ([]byte, error) {
	b = append(b, '{')
	for j := range fields {
		if j > 0 {
			b = append(b, ',')
		}
		b = append(b, keys[j]...)
		var err error
		if b, err = fields[j].appendJSONAt(b, a, nested); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// appendJSONString appends s as encoding/json writes it.
func appendJSONString(b []byte, s string) []byte {
	if plainJSON(s) {
		return append(append(append(b, '"'), s...), '"')
	}
	j, _ := json.Marshal(s) // a string always marshals
	return append(b, j...)
}

// appendJSONStrings appends l as encoding/json writes a []string.
func appendJSONStrings(b []byte, l []string) []byte {
	b = append(b, '[')
	for i, s := range l {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

// appendCSVAt appends the CSV cell of field f of the row at row: what
// appendCSV appends of it. scratch holds a struct list's JSON on the
// way.
func (f *field) appendCSVAt(b []byte, row addr, scratch *[]byte) []byte {
	if f.kind == kOther {
		return f.appendCSV(b, f.reflectAt(row))
	}
	p := f.valueAt(row)
	if p == nil {
		return b
	}
	switch f.kind {
	case kFixed:
		return hex.AppendEncode(b, fieldaddr.Bytes(p, f.width))
	case kBytes:
		v := *fieldaddr.At[[]byte](p)
		if f.optional && len(v) == 0 { // known empty, not null
			return append(b, `""`...)
		}
		return hex.AppendEncode(b, v)
	case kString:
		v := *fieldaddr.At[string](p)
		if f.optional && v == "" {
			return append(b, `""`...)
		}
		return appendCSVField(b, v)
	case kBool:
		return strconv.AppendBool(b, *fieldaddr.At[bool](p))
	case kInt8:
		return strconv.AppendInt(b, int64(*fieldaddr.At[int8](p)), 10)
	case kInt16:
		return strconv.AppendInt(b, int64(*fieldaddr.At[int16](p)), 10)
	case kInt32:
		return strconv.AppendInt(b, int64(*fieldaddr.At[int32](p)), 10)
	case kInt64:
		return strconv.AppendInt(b, *fieldaddr.At[int64](p), 10)
	case kTime:
		return appendTime(b, *fieldaddr.At[int64](p))
	case kFloat:
		return appendCSVFloat(b, *fieldaddr.At[float64](p))
	case kStrings:
		v := *fieldaddr.At[[]string](p)
		if len(v) == 0 {
			return append(b, "[]"...)
		}
		*scratch = appendStringList((*scratch)[:0], v)
		return appendCSVField(b, fieldaddr.String(*scratch))
	}
	// kStructs: its JSON, in a cell; an empty cell if it has none (a
	// NaN), as cell had it.
	data, n := fieldaddr.Slice(p)
	if n == 0 {
		return append(b, "[]"...)
	}
	j, err := f.elem.appendJSON((*scratch)[:0], data, n)
	*scratch = j
	if err != nil {
		return b
	}
	return appendCSVField(b, fieldaddr.String(j))
}
