package merge

import (
	"reflect"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestHeldKeepsEveryColumn: held has every field of schema.Result but
// its metadata columns (ResultMeta), of the same type, and the metadata
// reference; a result with every one of them set comes back whole from
// hold and result. An ok result whose metadata is not in the spill is
// refused (held has no room for it). A column added to schema.Result and
// not to held fails here rather than vanish between reading and applying.
func TestHeldKeepsEveryColumn(t *testing.T) {
	rt, ht := reflect.TypeFor[schema.Result](), reflect.TypeFor[held]()
	want := map[string]reflect.Type{"meta": reflect.TypeFor[metaRef]()}
	for i := range rt.NumField() {
		if f := rt.Field(i); f.Name != "ResultMeta" {
			want[f.Name] = f.Type
		}
	}
	if ht.NumField() != len(want) {
		t.Errorf("held has %d fields, want %d", ht.NumField(), len(want))
	}
	for name, typ := range want {
		if f, ok := ht.FieldByName(name); !ok || f.Type != typ {
			t.Errorf("held lacks field %s %v", name, typ)
		}
	}

	var r result
	v := reflect.ValueOf(&r.Result).Elem()
	for i := range v.NumField() {
		if rt.Field(i).Name != "ResultMeta" {
			setNonZero(t, rt.Field(i).Name, v.Field(i), i)
		}
	}
	r.meta = metaRef{off: 1, n: 2, infoLen: 3}
	h, ok := hold(&r)
	if !ok {
		t.Fatal("hold refused a result whose metadata is in the spill")
	}
	if got := h.result(); !reflect.DeepEqual(got, r) {
		t.Fatalf("held and back:\n got  %+v\n want %+v", got, r)
	}
	unspilled := result{Result: schema.Result{Outcome: schema.OutcomeOK}}
	if _, ok := hold(&unspilled); ok {
		t.Fatal("hold took an ok result whose metadata is not in the spill")
	}
}

// setNonZero sets v, a field of schema.Result, to a value other than its
// zero, made from i.
func setNonZero(t *testing.T, name string, v reflect.Value, i int) {
	t.Helper()
	n := int64(i + 1)
	switch v.Kind() {
	case reflect.Array:
		v.Index(0).SetUint(uint64(n))
	case reflect.Int8, reflect.Int32, reflect.Int64:
		v.SetInt(n)
	case reflect.String:
		v.SetString(name)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		p.Elem().SetInt(n)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		if e := s.Index(0); e.Kind() == reflect.Struct {
			e.Field(0).SetString(name)
		} else {
			e.SetUint(uint64(n))
		}
		v.Set(s)
	default:
		t.Fatalf("field %s: set no value of kind %v", name, v.Kind())
	}
}
