// Package textenc renders schema rows as text: CSV with a header row and
// JSON Lines. Column names come from the parquet struct tags; binary
// columns (hashes, raw names) are lowercase hex; timestamps RFC 3339 UTC
// with milliseconds; floats always with a fraction or an exponent (1.0,
// not 1); nulls are empty CSV cells or JSON null, where a known
// empty string of a nullable column is "" in both; lists are JSON arrays
// (a JSON string in a CSV cell; a list of strings there is DuckDB's list
// literal, which its VARCHAR[] cast reads: appendStringList). The other way, UnhexHash decodes the hex
// of a text hash column, which dedup and fetch read.
package textenc

import (
	"encoding/hex"
	"encoding/json"
	"io"
	"reflect"
	"strconv"
	"strings"

	"github.com/infohash/infohash/internal/fieldaddr"
)

type field struct {
	name     string
	index    []int
	optional bool
	ts       bool
	// Resolved once per type (resolved.go): where the field lies in its
	// row struct, its declared type, how it is read and written.
	offset uintptr
	typ    reflect.Type
	ptr    bool // a pointer field (*bool): nil is null
	kind   kind
	width  int    // the bytes of a kFixed array
	elem   *elems // the element fields of a kStructs list
}

// fieldsOf lists the columns of struct type t, found at index path prefix
// and byte offset base in the row, less those skip names.
func fieldsOf(t reflect.Type, prefix []int, base uintptr, skip map[string]bool) []field {
	var out []field
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		idx := append(append([]int(nil), prefix...), i)
		tag, has := sf.Tag.Lookup("parquet")
		if sf.Anonymous && sf.Type.Kind() == reflect.Struct && !has {
			out = append(out, fieldsOf(sf.Type, idx, base+sf.Offset, skip)...)
			continue
		}
		if !sf.IsExported() || tag == "-" {
			continue
		}
		opts := strings.Split(tag, ",")
		if skip[opts[0]] {
			continue
		}
		f := field{name: opts[0], index: idx, offset: base + sf.Offset, typ: sf.Type}
		f.optional = sf.Type.Kind() == reflect.Pointer // nil is null (*bool)
		f.ptr = f.optional
		for _, o := range opts[1:] {
			f.optional = f.optional || o == "optional"
			f.ts = f.ts || strings.HasPrefix(o, "timestamp")
		}
		f.resolve()
		out = append(out, f)
	}
	return out
}

// value converts one field to a JSON-ready value (nil for null).
func (f field) value(v reflect.Value) any {
	if f.optional && v.IsZero() {
		return nil
	}
	v = reflect.Indirect(v)
	switch v.Kind() {
	case reflect.Array:
		b := make([]byte, v.Len())
		reflect.Copy(reflect.ValueOf(b), v)
		return hex.EncodeToString(b)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return hex.EncodeToString(v.Bytes())
		}
		if v.Type().Elem().Kind() == reflect.Struct {
			sub := fieldsOf(v.Type().Elem(), nil, 0, nil)
			out := make([]Object, v.Len())
			for i := range out {
				out[i] = object(sub, v.Index(i))
			}
			return out
		}
		if v.Type().Elem().Kind() == reflect.String { // a csv cell's is no JSON (appendStringList)
			out := make([]string, v.Len())
			for i := range out {
				out[i] = v.Index(i).String()
			}
			return out
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = v.Index(i).Interface()
		}
		return out
	case reflect.Int64:
		if f.ts {
			return Time(v.Int())
		}
	case reflect.Float64:
		return pointedFloat(v.Float())
	}
	return v.Interface()
}

// pointedFloat is a float64 that marshals as encoding/json writes it, but
// with ".0" after a whole number (1.0): see pointed.
type pointedFloat float64

// MarshalJSON writes encoding/json's form of f, pointed.
func (f pointedFloat) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(float64(f))
	if err != nil {
		return b, err
	}
	return pointed(b, 0), nil
}

// Time renders a schema timestamp (ms) as RFC 3339 UTC (outside years
// 0000-9999, as DuckDB reads it: see appendTime).
func Time(ms int64) string {
	return string(appendTime(make([]byte, 0, len(timeLayout)), ms))
}

// Object is a row as ordered name/value pairs; it marshals to a JSON
// object with the columns in schema order.
type Object []KV

// KV is one column of an Object.
type KV struct {
	Key   string
	Value any
}

// MarshalJSON writes the columns in order.
func (o Object) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, kv := range o {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(kv.Key)
		v, err := json.Marshal(kv.Value)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}

func object(fs []field, v reflect.Value) Object {
	m := make(Object, len(fs))
	for i, f := range fs {
		m[i] = KV{f.name, f.value(v.FieldByIndex(f.index))}
	}
	return m
}

// Encoder writes rows of one struct type.
type Encoder[T any] struct {
	fields []field
	csvw   io.Writer // CSV goes here
	jsonw  io.Writer // JSON Lines go here
	keys   [][]byte  // the fields' quoted JSON keys, with the colon
	size   uintptr   // rows of a slice lie this many bytes apart
	buf    []byte
	cell   []byte // appendCSVAt's scratch
	header bool
}

// NewCSV writes CSV with a header row. skip names columns to leave out.
// Fields are quoted as encoding/csv quotes them; lines end with \n.
func NewCSV[T any](w io.Writer, skip ...string) *Encoder[T] {
	return &Encoder[T]{fields: fieldsFor[T](skip), csvw: w, size: reflect.TypeFor[T]().Size()}
}

// NewJSONL writes one JSON object per line.
func NewJSONL[T any](w io.Writer, skip ...string) *Encoder[T] {
	e := &Encoder[T]{fields: fieldsFor[T](skip), jsonw: w, size: reflect.TypeFor[T]().Size()}
	for _, f := range e.fields {
		e.keys = append(e.keys, f.key())
	}
	return e
}

func fieldsFor[T any](skip []string) []field {
	var zero T
	sk := map[string]bool{}
	for _, s := range skip {
		sk[s] = true
	}
	return fieldsOf(reflect.TypeOf(zero), nil, 0, sk)
}

// Object renders one row as ordered name/value pairs. JSON Lines are no
// longer written through it (AppendJSON is faster); its marshalling is
// the reference the tests hold AppendJSON's output to.
func (e *Encoder[T]) Object(row *T) Object {
	return object(e.fields, reflect.ValueOf(row).Elem())
}

// Write encodes rows.
func (e *Encoder[T]) Write(rows []T) error {
	if e.jsonw != nil {
		return e.writeJSON(rows)
	}
	b := e.buf[:0]
	defer func() { e.buf = b[:0] }()
	if !e.header {
		e.header = true
		for i, f := range e.fields {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendCSVField(b, f.name)
		}
		b = append(b, '\n')
	}
	base := fieldaddr.OfSlice(rows)
	for i := range rows {
		row := fieldaddr.Add(base, uintptr(i)*e.size)
		for j := range e.fields {
			if j > 0 {
				b = append(b, ',')
			}
			b = e.fields[j].appendCSVAt(b, row, &e.cell)
		}
		b = append(b, '\n')
		var err error
		if b, err = flushFull(e.csvw, b); err != nil {
			return err
		}
	}
	_, err := e.csvw.Write(b)
	return err
}

// AppendJSON appends row to b as one JSON object: a line of NewJSONL's
// output without its newline. The Encoder must come from NewJSONL.
func (e *Encoder[T]) AppendJSON(b []byte, row *T) ([]byte, error) {
	return appendObject(b, e.fields, e.keys, fieldaddr.Of(row), false)
}

// writeJSON writes rows as JSON Lines, through e.buf in pieces of
// about 64 KiB.
func (e *Encoder[T]) writeJSON(rows []T) error {
	b := e.buf[:0]
	defer func() { e.buf = b[:0] }()
	for i := range rows {
		var err error
		if b, err = e.AppendJSON(b, &rows[i]); err != nil {
			return err
		}
		b = append(b, '\n')
		if b, err = flushFull(e.jsonw, b); err != nil {
			return err
		}
	}
	_, err := e.jsonw.Write(b)
	return err
}

// flushFull writes b to w once it holds 64 KiB or more, and returns it
// emptied (or as it was, below that).
func flushFull(w io.Writer, b []byte) ([]byte, error) {
	if len(b) < 64<<10 {
		return b, nil
	}
	_, err := w.Write(b)
	return b[:0], err
}

func cell(x any) string {
	switch v := x.(type) {
	case nil:
		return ""
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case int8, int32, int64:
		return strconv.FormatInt(reflect.ValueOf(v).Int(), 10)
	case pointedFloat:
		return string(appendCSVFloat(nil, float64(v)))
	case []string:
		return string(appendStringList(nil, v))
	}
	b, _ := json.Marshal(x)
	return string(b)
}

// Flush finishes the output (the header of an empty CSV included).
func (e *Encoder[T]) Flush() error {
	if e.csvw == nil || e.header {
		return nil
	}
	return e.Write(nil)
}
