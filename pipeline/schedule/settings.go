package schedule

import (
	"fmt"
	"reflect"
	"strings"
)

// mapKey stands for a map's keys in Settings: both maps of the policy
// (backoff, peer_penalty.base) are keyed by failure class.
const mapKey = "CLASS"

// Settings lists the JSON paths that "policy set" can assign, in the
// order of the policy's fields; a map's entries appear as
// "backoff.CLASS".
func Settings() []string { return settingsOf(reflect.TypeFor[Policy](), "") }

func settingsOf(t reflect.Type, prefix string) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name := jsonName(f)
		if name == "" {
			continue
		}
		path := prefix + name
		switch f.Type.Kind() {
		case reflect.Struct:
			out = append(out, settingsOf(f.Type, path+".")...)
		case reflect.Map:
			out = append(out, path+"."+mapKey)
		default:
			out = append(out, path)
		}
	}
	return out
}

// checkSetting follows keys through the policy's shape. A name that is
// not a field of the object it is looked up in is an unknown setting;
// the error lists the settings of that object. Map keys are not checked
// here: Validate names the failure classes.
func checkSetting(path string, keys []string) error {
	t := reflect.TypeFor[Policy]()
	for i, k := range keys {
		switch t.Kind() {
		case reflect.Struct:
			f, ok := fieldByJSON(t, k)
			if !ok {
				prefix := strings.Join(keys[:i], ".")
				if prefix != "" {
					prefix += "."
				}
				return fmt.Errorf("%q: unknown setting (settable: %s)", path, strings.Join(settingsOf(t, prefix), ", "))
			}
			t = f.Type
		case reflect.Map:
			t = t.Elem()
		default:
			return fmt.Errorf("%q: no such setting (%q is not an object)", path, keys[i-1])
		}
	}
	return nil
}

func fieldByJSON(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if f := t.Field(i); jsonName(f) == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "-" || !f.IsExported() {
		return ""
	}
	return name
}
