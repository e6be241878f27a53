package fieldaddr

import (
	"reflect"
	"testing"
)

type inner struct {
	B [3]byte
	S []string
}

type row struct {
	A int8
	inner
	F float64
	P *int32
}

// TestAddresses: Of, OfSlice and Add with reflect's offsets reach the
// fields reflect reaches, and At, Bytes, Slice, String and Value read
// what is there.
func TestAddresses(t *testing.T) {
	v := int32(-7)
	rows := []row{{A: 1, F: 2.5}, {A: -3, inner: inner{B: [3]byte{4, 5, 6}, S: []string{"x", "y"}}, F: -1, P: &v}}
	size := reflect.TypeFor[row]().Size()
	off := func(name string) uintptr {
		f, ok := reflect.TypeFor[row]().FieldByName(name)
		if !ok {
			t.Fatalf("no field %s", name)
		}
		o := f.Offset
		if len(f.Index) > 1 { // a field of the embedded inner
			o += reflect.TypeFor[row]().Field(f.Index[0]).Offset
		}
		return o
	}
	for i := range rows {
		r := Add(OfSlice(rows), uintptr(i)*size)
		if r != Of(&rows[i]) {
			t.Fatalf("row %d: Add(OfSlice) %p, Of %p", i, r, Of(&rows[i]))
		}
		if got := *At[int8](Add(r, off("A"))); got != rows[i].A {
			t.Errorf("row %d: A %d, want %d", i, got, rows[i].A)
		}
		if got := *At[float64](Add(r, off("F"))); got != rows[i].F {
			t.Errorf("row %d: F %v, want %v", i, got, rows[i].F)
		}
		if got := *At[*int32](Add(r, off("P"))); got != rows[i].P {
			t.Errorf("row %d: P %p, want %p", i, got, rows[i].P)
		}
		if got := Bytes(Add(r, off("B")), len(rows[i].B)); !reflect.DeepEqual(got, rows[i].B[:]) {
			t.Errorf("row %d: B %v, want %v", i, got, rows[i].B)
		}
		data, n := Slice(Add(r, off("S")))
		if n != len(rows[i].S) || (data == nil) != (rows[i].S == nil) {
			t.Fatalf("row %d: S at %p, %d long; want %d long, nil %v", i, data, n, len(rows[i].S), rows[i].S == nil)
		}
		for j := range n {
			if got := *At[string](Add(data, uintptr(j)*reflect.TypeFor[string]().Size())); got != rows[i].S[j] {
				t.Errorf("row %d: S[%d] %q, want %q", i, j, got, rows[i].S[j])
			}
		}
		if got := Value(reflect.TypeFor[row](), r).Interface(); !reflect.DeepEqual(got, rows[i]) {
			t.Errorf("row %d: Value %+v, want %+v", i, got, rows[i])
		}
	}
	if OfSlice([]row(nil)) != nil {
		t.Error("OfSlice(nil) is not nil")
	}
	if got := String([]byte("abc")); got != "abc" {
		t.Errorf("String: %q", got)
	}
}
