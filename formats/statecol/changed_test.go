package statecol

import (
	"bytes"
	"reflect"
	"testing"
)

func TestChanged(t *testing.T) {
	a := randomStates(1, 1, false)[0]
	if c := Changed(&a, &a); c != 0 {
		t.Fatalf("a row differs from itself in %b", c)
	}
	b := a
	b.SeenCount++
	b.Tier = "x"
	if c := Changed(&a, &b); c != 1<<cSeenCount|1<<cTier {
		t.Fatalf("changed columns %b, want seen_count and tier", c)
	}
}

// TestChangedSeesEveryField changes each field of schema.State in turn:
// Changed must report it, or a splice would silently drop that update
// (a field added to State without a column here fails this test).
func TestChangedSeesEveryField(t *testing.T) {
	base := randomStates(1, 2, false)[0]
	v := reflect.ValueOf(&base).Elem()
	for i := range v.NumField() {
		b := base
		f := reflect.ValueOf(&b).Elem().Field(i)
		switch f.Kind() {
		case reflect.Array:
			f.Index(0).SetUint(f.Index(0).Uint() + 1)
		case reflect.Slice:
			if f.Type().Elem().Kind() == reflect.String {
				f.Set(reflect.Append(f, reflect.ValueOf("127.0.0.1:1")))
			} else {
				f.SetBytes(append(bytes.Clone(f.Bytes()), 1))
			}
		case reflect.String:
			f.SetString(f.String() + "x")
		case reflect.Int8, reflect.Int32, reflect.Int64:
			f.SetInt(f.Int() + 1)
		case reflect.Float64:
			f.SetFloat(f.Float() + 1)
		default:
			t.Fatalf("field %s: kind %s not covered by this test", v.Type().Field(i).Name, f.Kind())
		}
		if Changed(&base, &b) == 0 {
			t.Errorf("a change of %s is not seen", v.Type().Field(i).Name)
		}
	}
}
