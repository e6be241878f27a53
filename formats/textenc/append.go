package textenc

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// JSON Lines are appended to a byte buffer column by column, without
// building an Object per row: marshalling Objects (an interface value per
// column, then encoding/json checking and compacting what MarshalJSON
// returned) wrote ~90k rows a second, and a 20M-hash state took almost
// four minutes. The output is byte for byte what Object marshalling
// gives, strings included: those that need escaping (quotes, control
// characters, non-ASCII, and <, > and &, which json.Marshal escapes) and
// lists of values go through encoding/json, as before.

// key is the field's JSON key, quoted, with the colon.
func (f field) key() []byte {
	k, _ := json.Marshal(f.name)
	return append(k, ':')
}

// appendJSON appends the JSON value of field f of a row, v, reading it by
// reflection: the encoders call it for a field of kind kOther alone
// (appendJSONAt writes the others, byte for byte as it would).
func (f field) appendJSON(b []byte, v reflect.Value) ([]byte, error) {
	if f.optional && v.IsZero() {
		return append(b, "null"...), nil
	}
	v = reflect.Indirect(v)
	switch v.Kind() {
	case reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 && v.CanAddr() {
			return appendHex(b, v.Bytes()), nil
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return appendHex(b, v.Bytes()), nil
		}
		if v.Len() == 0 {
			return append(b, "[]"...), nil
		}
	case reflect.String:
		if s := v.String(); plainJSON(s) {
			return append(append(append(b, '"'), s...), '"'), nil
		}
	case reflect.Bool:
		return strconv.AppendBool(b, v.Bool()), nil
	case reflect.Int64:
		if f.ts {
			b = append(b, '"')
			b = appendTime(b, v.Int())
			return append(b, '"'), nil
		}
		return strconv.AppendInt(b, v.Int(), 10), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32:
		return strconv.AppendInt(b, v.Int(), 10), nil
	case reflect.Float64:
		return appendFloat(b, v.Float(), f.name)
	}
	j, err := json.Marshal(f.value(v))
	if err != nil {
		return b, fmt.Errorf("textenc: %s: %w", f.name, err)
	}
	return append(b, j...), nil
}

// timeLayout is how Time renders timestamps.
const timeLayout = "2006-01-02T15:04:05.000Z"

// appendTime appends ms (since the epoch) as Time renders it, without
// time.Format's walk through the layout, which was a fifth of a CSV
// export. The date comes from the day count by the usual civil-calendar
// arithmetic (400-year eras of 146097 days, years starting in March).
//
// RFC 3339 has no other years than 0000-9999. Outside them, a time within
// DuckDB's TIMESTAMP range (duckMinMs..duckMaxMs) is written as
// time.Format writes it, with more year digits or a minus sign
// (10000-01-01T00:00:00.000Z, -0001-…: the proleptic year before 0000),
// which DuckDB's TIMESTAMPTZ reads back as the same instant; past the
// range, where no text is one DuckDB reads (a single value would fail the
// whole file), infinity or -infinity, which DuckDB and PostgreSQL read
// as such.
func appendTime(b []byte, ms int64) []byte {
	const msPerDay = 86_400_000
	days, rem := ms/msPerDay, ms%msPerDay
	if rem < 0 {
		days, rem = days-1, rem+msPerDay
	}
	z := days + 719_468 // days since 0000-03-01
	era := z / 146_097
	if z < 0 && z%146_097 != 0 {
		era--
	}
	doe := z - era*146_097                                   // day of the era, 0-146096
	yoe := (doe - doe/1460 + doe/36_524 - doe/146_096) / 365 // year of the era, 0-399
	doy := doe - (365*yoe + yoe/4 - yoe/100)                 // day of the year from March 1, 0-365
	mp := (5*doy + 2) / 153                                  // month from March, 0-11
	day := doy - (153*mp+2)/5 + 1
	month := mp + 3
	if mp >= 10 {
		month = mp - 9
	}
	year := yoe + era*400
	if month <= 2 {
		year++
	}
	if year < 0 || year > 9999 {
		switch {
		case ms > duckMaxMs:
			return append(b, "infinity"...)
		case ms < duckMinMs:
			return append(b, "-infinity"...)
		}
		return time.UnixMilli(ms).UTC().AppendFormat(b, timeLayout)
	}
	ms3 := rem % 1000
	return append(b,
		pair[2*(year/100)], pair[2*(year/100)+1], pair[2*(year%100)], pair[2*(year%100)+1], '-',
		pair[2*month], pair[2*month+1], '-', pair[2*day], pair[2*day+1], 'T',
		pair[2*(rem/3_600_000)], pair[2*(rem/3_600_000)+1], ':',
		pair[2*(rem/60_000%60)], pair[2*(rem/60_000%60)+1], ':',
		pair[2*(rem/1000%60)], pair[2*(rem/1000%60)+1], '.',
		byte('0'+ms3/100), pair[2*(ms3%100)], pair[2*(ms3%100)+1], 'Z')
}

// DuckDB's TIMESTAMP range in ms: 290309-12-22 (BC) 00:00:00 to
// 294247-01-10 04:00:54.775, what its microseconds in an int64 hold
// (checked with tools/duckcheck's DuckDB: a millisecond past either end
// is a conversion error).
const duckMinMs, duckMaxMs = -9_223_372_022_400_000, 9_223_372_036_854_775

// pair holds the two decimal digits of 0-99 at 2n: appendTime's fields
// are taken from it (a digit at a time, with a division each, they were
// a tenth of a text export).
const pair = "00010203040506070809" + "10111213141516171819" + "20212223242526272829" +
	"30313233343536373839" + "40414243444546474849" + "50515253545556575859" +
	"60616263646566676869" + "70717273747576777879" + "80818283848586878889" + "90919293949596979899"

func appendHex(b, raw []byte) []byte {
	b = append(b, '"')
	b = hex.AppendEncode(b, raw)
	return append(b, '"')
}

// plainJSON reports whether s is its own JSON string body: printable
// ASCII without the characters json.Marshal escapes.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20, c >= 0x80, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// appendFloat formats a float64 as encoding/json does: like strconv's
// shortest 'f' form, in exponent form (e-7, e+21) for the very small and
// very large; NaN and infinities are errors. A whole number keeps a
// fraction (1.0, not 1): see pointed.
func appendFloat(b []byte, x float64, name string) ([]byte, error) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return b, fmt.Errorf("textenc: %s: %w", name,
			&json.UnsupportedValueError{Value: reflect.ValueOf(x), Str: strconv.FormatFloat(x, 'g', -1, 64)})
	}
	start, format := len(b), byte('f')
	if a := math.Abs(x); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, x, format, -1, 64)
	if format == 'e' {
		// e-09 -> e-9, as encoding/json writes it.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return pointed(b, start), nil
}

// pointed appends ".0" to the number b[start:] when it has neither a
// fraction nor an exponent. A reader that guesses a column's type from
// a sample of its values (DuckDB's read_csv and read_json, Elasticsearch's
// dynamic mapping) takes a column of whole numbers for an integer one:
// activity is 1 for every hash sighted once, so an export's sample often
// holds nothing else, and DuckDB then read a later 1.5 as 2, silently.
func pointed(b []byte, start int) []byte {
	for _, c := range b[start:] {
		if c == '.' || c == 'e' || c == 'E' || c == 'N' || c == 'I' { // NaN, ±Inf: not numbers
			return b
		}
	}
	return append(b, ".0"...)
}

// appendCSVFloat appends x as a CSV cell: strconv's shortest 'g' form,
// pointed.
func appendCSVFloat(b []byte, x float64) []byte {
	start := len(b)
	return pointed(strconv.AppendFloat(b, x, 'g', -1, 64), start)
}

// appendCSV appends the CSV cell of field f of a row, v, by reflection
// (for kOther alone, as appendJSON: appendCSVAt writes the others): what cell makes
// of f.value(v), quoted as encoding/csv quotes it, but without a string
// per cell for the columns that are numbers, hex or timestamps.
//
// A null is an empty cell; a known empty value of a nullable column (an
// empty name, its empty raw bytes) is a quoted empty string, "", as
// PostgreSQL's CSV tells them apart.
func (f field) appendCSV(b []byte, v reflect.Value) []byte {
	if f.optional && v.IsZero() {
		return b
	}
	v = reflect.Indirect(v)
	if f.optional && (v.Kind() == reflect.String || v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8) && v.Len() == 0 {
		return append(b, `""`...)
	}
	switch v.Kind() {
	case reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 && v.CanAddr() {
			return hex.AppendEncode(b, v.Bytes())
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return hex.AppendEncode(b, v.Bytes())
		}
		if v.Len() == 0 {
			return append(b, "[]"...) // what cell makes of an empty list, without encoding/json
		}
		if v.Type().Elem().Kind() == reflect.String {
			return appendCSVField(b, string(appendStringList(nil, v.Convert(stringsType).Interface().([]string))))
		}
	case reflect.String:
		return appendCSVField(b, v.String())
	case reflect.Bool:
		return strconv.AppendBool(b, v.Bool())
	case reflect.Int64:
		if f.ts {
			return appendTime(b, v.Int())
		}
		return strconv.AppendInt(b, v.Int(), 10)
	case reflect.Int8, reflect.Int32:
		return strconv.AppendInt(b, v.Int(), 10)
	case reflect.Float64:
		return appendCSVFloat(b, v.Float())
	}
	return appendCSVField(b, cell(f.value(v)))
}

var stringsType = reflect.TypeFor[[]string]()

// appendStringList appends the list of strings v as a csv cell holds it:
// ["a","b"], each element in double quotes with its " and \ escaped by a
// backslash and every other character as it is, which DuckDB's cast of
// the cell to VARCHAR[] (--describe's type) reads back exactly. JSON's
// other escapes it does not undo: "a\u0026b" came back "au0026b", a tab's
// \t as "t". Without a control character it is the JSON array too.
func appendStringList(b []byte, v []string) []byte {
	b = append(b, '[')
	for i, s := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		for _, c := range []byte(s) {
			if c == '"' || c == '\\' {
				b = append(b, '\\')
			}
			b = append(b, c)
		}
		b = append(b, '"')
	}
	return append(b, ']')
}

// appendCSVField appends s as encoding/csv's Writer writes a field
// (comma-separated, \n line ends): quoted, with quotes doubled, when it
// holds a comma, a quote or a line break, starts with a space, or is \.
func appendCSVField(b []byte, s string) []byte {
	if !csvNeedsQuotes(s) {
		return append(b, s...)
	}
	b = append(b, '"')
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			break
		}
		b = append(append(b, s[:i+1]...), '"')
		s = s[i+1:]
	}
	return append(append(b, s...), '"')
}

func csvNeedsQuotes(s string) bool {
	if s == "" {
		return false
	}
	if s == `\.` || strings.ContainsAny(s, ",\"\r\n") {
		return true
	}
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsSpace(r)
}
