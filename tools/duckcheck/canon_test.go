package duckcheck

import (
	"bytes"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Every export is compared with the tables through one canonical text
// form per value, whatever decoded it (DuckDB's typed or all-VARCHAR
// readers, encoding/json, the Arrow reader): null and "" are "", binary is
// lowercase hex, a timestamp is its Unix milliseconds, a number its
// shortest decimal, a list or struct its canonical elements.

// canonRows maps a hash (hex) to its row: column → canonical value.
type canonRows map[string]map[string]string

var (
	rfc3339UTC = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$`)
	lowerHex   = regexp.MustCompile(`^([0-9a-f]{2})*$`)
)

// kindOf classifies a DuckDB type for canonicalisation.
func kindOf(duckType string) string {
	switch {
	case strings.HasSuffix(duckType, "[]"):
		return "list"
	case strings.HasPrefix(duckType, "TIMESTAMP"):
		return "ts"
	case duckType == "BLOB":
		return "blob"
	case duckType == "DOUBLE" || duckType == "FLOAT":
		return "float"
	}
	return ""
}

// canonValue renders v, a value of a column of the given kind.
func canonValue(v any, kind string) (string, error) {
	if v == nil {
		return "", nil
	}
	switch kind {
	case "ts":
		switch x := v.(type) {
		case time.Time:
			return strconv.FormatInt(x.UnixMilli(), 10), nil
		case string:
			if !rfc3339UTC.MatchString(x) {
				return "", fmt.Errorf("timestamp %q is not RFC 3339 UTC", x)
			}
			tm, err := time.Parse(time.RFC3339Nano, x)
			if err != nil {
				return "", fmt.Errorf("timestamp %q: %v", x, err)
			}
			return strconv.FormatInt(tm.UnixMilli(), 10), nil
		default:
			return "", fmt.Errorf("timestamp is a %T (%v), want a time or RFC 3339 text", v, v)
		}
	case "blob":
		switch x := v.(type) {
		case []byte:
		case string:
			if !lowerHex.MatchString(x) {
				return "", fmt.Errorf("binary value %.60q is not lowercase hex", x)
			}
		default:
			return "", fmt.Errorf("binary value is a %T (%v), want bytes or hex text", v, v)
		}
	case "float":
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case json.Number:
			s = x.String()
		}
		if s != "" {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return "", fmt.Errorf("number %q: %v", s, err)
			}
			v = f
		}
	case "list":
		if s, ok := v.(string); ok { // CSV: a JSON array in a cell
			d := json.NewDecoder(strings.NewReader(s))
			d.UseNumber()
			if err := d.Decode(&v); err != nil {
				return "", fmt.Errorf("list %.60q is not JSON: %v", s, err)
			}
		}
		if _, ok := v.([]any); !ok {
			return "", fmt.Errorf("list column holds %T", v)
		}
	}
	return canonAny(v), nil
}

// canonAny renders a value with no column kind (list elements, plain
// scalars).
func canonAny(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []byte:
		return hex.EncodeToString(x)
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case time.Time:
		return strconv.FormatInt(x.UnixMilli(), 10)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = canonAny(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + canonAny(x[k])
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(rv.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(rv.Uint(), 10)
	}
	return fmt.Sprintf("%v", v)
}

// canonRow renders one decoded row (column → value) with the reference's
// column kinds and adds it to rows, keyed by its info_hash.
func canonRow(rows canonRows, row map[string]any, kinds map[string]string) error {
	out := make(map[string]string, len(row))
	for col, v := range row {
		s, err := canonValue(v, kinds[col])
		if err != nil {
			return fmt.Errorf("column %s: %w", col, err)
		}
		out[col] = s
	}
	h := out["info_hash"]
	if len(h) != 40 || !lowerHex.MatchString(h) {
		return fmt.Errorf("info_hash %q is not 40 lowercase hex digits", h)
	}
	if _, dup := rows[h]; dup {
		return fmt.Errorf("hash %s appears twice", h)
	}
	rows[h] = out
	return nil
}

// queryCanon runs a query and renders its rows.
func queryCanon(t *testing.T, db *sql.DB, query string, kinds map[string]string) ([]string, canonRows) {
	t.Helper()
	rs, err := db.Query(query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		t.Fatal(err)
	}
	rows := canonRows{}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := make(map[string]any, len(cols))
		for i, c := range cols {
			row[c] = vals[i]
		}
		if err := canonRow(rows, row, kinds); err != nil {
			t.Fatalf("%s: row %d: %v", query, len(rows)+1, err)
		}
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return cols, rows
}

// structRow turns a schema row (parquet-tagged struct) into column →
// value, the way the tag says the column is typed: optional zero values
// are null, timestamps times, hashes bytes.
func structRow(v reflect.Value) map[string]any {
	out := map[string]any{}
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag, has := sf.Tag.Lookup("parquet")
		if sf.Anonymous && !has {
			for k, x := range structRow(v.Field(i)) {
				out[k] = x
			}
			continue
		}
		opts := strings.Split(tag, ",")
		fv := v.Field(i)
		var x any
		switch {
		case strings.Contains(tag, ",optional") && fv.IsZero(), fv.Kind() == reflect.Pointer && fv.IsNil():
			x = nil
		case fv.Kind() == reflect.Pointer: // *bool: null when nil
			x = fv.Elem().Interface()
		case strings.Contains(tag, "timestamp("):
			x = time.UnixMilli(fv.Int()).UTC()
		case fv.Kind() == reflect.Array:
			b := make([]byte, fv.Len())
			reflect.Copy(reflect.ValueOf(b), fv)
			x = b
		case fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() != reflect.Uint8:
			l := make([]any, fv.Len())
			for j := range l {
				e := fv.Index(j)
				if e.Kind() == reflect.Struct {
					l[j] = structRow(e)
				} else {
					l[j] = e.Interface()
				}
			}
			x = l
		default:
			x = fv.Interface()
		}
		out[opts[0]] = x
	}
	return out
}

// compareCanon reports the differences between an export's rows and the
// reference's, over the columns cols.
func compareCanon(t *testing.T, what string, got, want canonRows, cols []string) {
	t.Helper()
	errs := 0
	report := func(format string, args ...any) {
		t.Helper()
		if errs++; errs <= 8 {
			t.Errorf(what+": "+format, args...)
		}
	}
	for h, w := range want {
		g, ok := got[h]
		if !ok {
			report("hash %s is missing", h)
			continue
		}
		for _, c := range cols {
			if _, present := g[c]; !present {
				report("hash %s has no column %s", h, c)
			} else if g[c] != w[c] {
				report("hash %s column %s: %.120q, table has %.120q", h, c, g[c], w[c])
			}
		}
	}
	for h := range got {
		if _, ok := want[h]; !ok {
			report("hash %s is not in the table", h)
		}
	}
	if errs > 8 {
		t.Errorf("%s: %d differences in all", what, errs)
	}
}

// jsonObject decodes one JSON object keeping numbers exact and reports
// its keys in order.
func jsonObject(line []byte) (map[string]any, []string, error) {
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, fmt.Errorf("not a JSON object: %.80q", line)
	}
	m := map[string]any{}
	var keys []string
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return nil, nil, err
		}
		k := tok.(string)
		var v any
		if err := d.Decode(&v); err != nil {
			return nil, nil, fmt.Errorf("key %s: %w", k, err)
		}
		keys = append(keys, k)
		m[k] = v
	}
	if _, err := d.Token(); err != nil {
		return nil, nil, err
	}
	if d.More() {
		return nil, nil, fmt.Errorf("more than one JSON value on the line: %.80q", line)
	}
	return m, keys, nil
}
