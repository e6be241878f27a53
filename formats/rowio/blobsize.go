package rowio

import (
	"reflect"
	"strings"
	"sync"
)

// blobSizer adds up the bytes of a row's blob columns (blobColumns), so
// that ParquetWriter asks parquet-go for its size only once they may
// have made a difference: Size sums every column's buffer, and asking
// after every row made writing torrents 1.15-1.5x slower.
type blobSizer []blobPath

// blobPath reaches one blob column's values in a row: field is the index
// path of a string or []byte field, or of a slice of structs whose
// elements hold the value at elem.
type blobPath struct {
	field, elem []int
}

var blobSizers sync.Map // reflect.Type → blobSizer

// sizerOf returns the blobSizer of row type t.
func sizerOf(t reflect.Type) blobSizer {
	if v, ok := blobSizers.Load(t); ok {
		return v.(blobSizer)
	}
	var s blobSizer
	for _, path := range blobColumns {
		if p, ok := findBlob(t, path); ok {
			s = append(s, p)
		}
	}
	blobSizers.Store(t, s)
	return s
}

// findBlob resolves a leaf column path (a list's "list" and "element"
// levels included) to T's fields.
func findBlob(t reflect.Type, path []string) (blobPath, bool) {
	f, ok := fieldByColumn(t, path[0])
	if !ok {
		return blobPath{}, false
	}
	if len(path) == 1 {
		return blobPath{field: f.Index}, isBytes(f.Type)
	}
	if f.Type.Kind() != reflect.Slice || f.Type.Elem().Kind() != reflect.Struct || len(path) != 4 {
		return blobPath{}, false
	}
	e, ok := fieldByColumn(f.Type.Elem(), path[3])
	if !ok || !isBytes(e.Type) {
		return blobPath{}, false
	}
	return blobPath{field: f.Index, elem: e.Index}, true
}

// fieldByColumn finds the field of struct t written as column name.
func fieldByColumn(t reflect.Type, name string) (reflect.StructField, bool) {
	for _, sf := range reflect.VisibleFields(t) {
		if sf.Anonymous || !sf.IsExported() {
			continue
		}
		if tag, _, _ := strings.Cut(sf.Tag.Get("parquet"), ","); tag == name || (tag == "" && sf.Name == name) {
			return sf, true
		}
	}
	return reflect.StructField{}, false
}

// isBytes reports whether t is a string or []byte, or a pointer to one
// (a nil pointer counts no bytes).
func isBytes(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.String || (t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8)
}

// size is the bytes of row's blob values (v is the row, addressable).
func (s blobSizer) size(v reflect.Value) int {
	n := 0
	for _, p := range s {
		f := v.FieldByIndex(p.field)
		if p.elem == nil {
			if f.Kind() == reflect.Pointer {
				if f.IsNil() {
					continue
				}
				f = f.Elem()
			}
			n += f.Len()
			continue
		}
		for i := range f.Len() {
			n += f.Index(i).FieldByIndex(p.elem).Len()
		}
	}
	return n
}
