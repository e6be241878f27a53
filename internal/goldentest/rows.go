package goldentest

import (
	"fmt"
	"reflect"
)

// Rows returns rows of the struct type T for a golden file that shows a
// field written wrong: a zero row (every optional column null, every
// list empty), rows with every field set, with every other field set
// (two ways round), and one with every pointer at a zero value and every
// slice empty but not nil. A field k (counted through embedded structs,
// in order) of a row of seed gets a value made from both that no other
// field or row has; a string field gets text(seed, k) (PlainText, or one
// that adds characters an encoder must quote or escape); list fields get
// seed%3+1 elements. It panics on a field kind it cannot fill.
func Rows[T any](text func(seed, k int) string) []T {
	all := func(int) bool { return true }
	var zero T
	rows := []T{
		zero,
		fill[T](1, all, text),
		fill[T](2, func(k int) bool { return k%2 == 0 }, text),
		fill[T](3, func(k int) bool { return k%2 == 1 }, text),
		zero,
		fill[T](4, all, text),
	}
	emptyFields(reflect.ValueOf(&rows[4]).Elem())
	return rows
}

// PlainText is the string of field k in a row of seed: "r1.f3".
func PlainText(seed, k int) string { return fmt.Sprintf("r%d.f%d", seed, k) }

// fill is a T whose field k is set if keep(k) (Rows).
func fill[T any](seed int, keep func(int) bool, text func(seed, k int) string) T {
	var r T
	k := 0
	fillFields(reflect.ValueOf(&r).Elem(), seed, &k, keep, text)
	return r
}

func fillFields(v reflect.Value, seed int, k *int, keep func(int) bool, text func(seed, k int) string) {
	for i := range v.NumField() {
		f, sf := v.Field(i), v.Type().Field(i)
		if sf.Anonymous && f.Kind() == reflect.Struct {
			fillFields(f, seed, k, keep, text)
			continue
		}
		if !sf.IsExported() {
			continue
		}
		if keep(*k) {
			fillOne(f, seed, *k, text)
		}
		*k++
	}
}

func fillOne(f reflect.Value, seed, k int, text func(seed, k int) string) {
	n := seed*1000 + k + 1
	switch f.Kind() {
	case reflect.Pointer:
		f.Set(reflect.New(f.Type().Elem()))
		fillOne(f.Elem(), seed, k, text)
	case reflect.Array:
		for i := range f.Len() {
			f.Index(i).SetUint(uint64(n*7 + i))
		}
	case reflect.String:
		f.SetString(text(seed, k))
	case reflect.Bool:
		f.SetBool(true)
	case reflect.Int8:
		f.SetInt(int64(seed*16 + k + 1))
	case reflect.Int16: // past int8's range, and negative
		f.SetInt(int64(-n * 7))
	case reflect.Int32, reflect.Int64:
		f.SetInt(int64(n) * 1_000_003)
	case reflect.Float64:
		f.SetFloat(float64(n) / 8)
	case reflect.Slice:
		if f.Type().Elem().Kind() == reflect.Uint8 {
			f.SetBytes(fmt.Appendf(nil, "r%d.f%d/%x", seed, k, n))
			return
		}
		f.Set(reflect.MakeSlice(f.Type(), seed%3+1, seed%3+1))
		for i := range f.Len() {
			e := f.Index(i)
			if e.Kind() == reflect.Struct {
				j := 0
				fillFields(e, seed*10+i, &j, func(int) bool { return true }, text)
			} else {
				fillOne(e, seed*10+i, k, text)
			}
		}
	default:
		panic(fmt.Sprintf("goldentest.Rows: cannot fill a %s", f.Type()))
	}
}

// emptyFields sets every pointer field of the struct v to a zero value
// and every slice field to an empty non-nil slice: known values, not
// nulls.
func emptyFields(v reflect.Value) {
	for i := range v.NumField() {
		f, sf := v.Field(i), v.Type().Field(i)
		switch {
		case sf.Anonymous && f.Kind() == reflect.Struct:
			emptyFields(f)
		case !sf.IsExported():
		case f.Kind() == reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		case f.Kind() == reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 0, 0))
		}
	}
}
