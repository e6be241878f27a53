package schedule

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Duration is a time.Duration that reads and writes JSON as text with day
// units: "30m", "8h", "1d", "1d12h", "500ms". Parsing also accepts "w"
// (7 days) and decimal fractions ("1.5h"); writing is canonical (largest
// units first, no zero parts), so equal durations have equal JSON.
type Duration time.Duration

// Day is 24 hours: the unit of the policy's long delays.
const Day = 24 * time.Hour

// MaxDuration bounds every duration ParseDuration accepts (~100 years),
// far from int64 overflow.
const MaxDuration = 100 * 365 * Day

var units = []struct {
	name string
	d    time.Duration
}{
	{"w", 7 * Day}, {"d", Day}, {"h", time.Hour}, {"m", time.Minute},
	{"s", time.Second}, {"ms", time.Millisecond}, {"us", time.Microsecond}, {"ns", 1},
}

// ParseDuration parses text such as "30m", "1d12h", "2w" or "1.5h". The
// units are w, d, h, m, s, ms, us and ns; "0" alone is zero. Negative
// durations are rejected.
func ParseDuration(s string) (time.Duration, error) {
	if s == "0" {
		return 0, nil
	}
	if s == "" {
		return 0, fmt.Errorf("empty duration")
	}
	var total time.Duration
	rest := s
	for rest != "" {
		i := 0
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.') {
			i++
		}
		num := rest[:i]
		if num == "" || num == "." || strings.Count(num, ".") > 1 {
			return 0, fmt.Errorf("duration %q: expected a number at %q", s, rest)
		}
		j := i
		for j < len(rest) && rest[j] >= 'a' && rest[j] <= 'z' {
			j++
		}
		unit := rest[i:j]
		var ud time.Duration
		for _, u := range units {
			if u.name == unit {
				ud = u.d
			}
		}
		if ud == 0 {
			if unit == "" {
				return 0, fmt.Errorf("duration %q: missing unit after %q (use w, d, h, m, s, ms)", s, num)
			}
			return 0, fmt.Errorf("duration %q: unknown unit %q (use w, d, h, m, s, ms)", s, unit)
		}
		whole, frac, _ := strings.Cut(num, ".")
		var w int64
		if whole != "" {
			var err error
			if w, err = strconv.ParseInt(whole, 10, 64); err != nil || w > int64(MaxDuration/ud) {
				return 0, fmt.Errorf("duration %q: longer than 100 years", s)
			}
		}
		total += time.Duration(w) * ud
		if frac != "" {
			f, err := strconv.ParseFloat("0."+frac, 64)
			if err != nil {
				return 0, fmt.Errorf("duration %q: bad number %q", s, num)
			}
			total += time.Duration(f*float64(ud) + 0.5)
		}
		if total > MaxDuration {
			return 0, fmt.Errorf("duration %q: longer than 100 years", s)
		}
		rest = rest[j:]
	}
	return total, nil
}

// String renders d canonically: "30m", "1d12h", "0s".
func (d Duration) String() string {
	v := time.Duration(d)
	if v == 0 {
		return "0s"
	}
	var b strings.Builder
	if v < 0 {
		b.WriteByte('-')
		v = -v
	}
	for _, u := range units[1:] { // days are the largest unit written
		if v >= u.d {
			fmt.Fprintf(&b, "%d%s", v/u.d, u.name)
			v %= u.d
		}
	}
	return b.String()
}

// MarshalJSON writes d as a canonical duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a duration string such as "30m" or "7d".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return &DurationError{Raw: string(b), Reason: `want a string such as "30m" or "7d"`}
	}
	v, err := ParseDuration(s)
	if err != nil {
		return &DurationError{Raw: string(b), Reason: err.Error()}
	}
	*d = Duration(v)
	return nil
}

// DurationError reports a JSON value that is not a valid duration. Raw is
// the JSON text of the value; Load turns it into a field path.
type DurationError struct {
	Raw    string
	Reason string
}

func (e *DurationError) Error() string { return e.Reason }
