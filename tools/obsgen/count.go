package obsgen

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseCount reads a row count such as "200000", "200k", "10M", "1.5M" or
// "1G" (k = 10³, M = 10⁶, G or B = 10⁹).
func ParseCount(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := 1.0
	if t != "" {
		switch t[len(t)-1] {
		case 'k', 'K':
			mult = 1e3
		case 'm', 'M':
			mult = 1e6
		case 'g', 'G', 'b', 'B':
			mult = 1e9
		}
		if mult != 1 {
			t = t[:len(t)-1]
		}
	}
	if mult == 1 {
		n, err := strconv.ParseInt(t, 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("bad count %q: want a number like 200000, 200k, 10M", s)
		}
		return n, nil
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 || math.IsNaN(f) || f*mult > math.MaxInt64/2 || strings.ContainsAny(t, "eEnNiIxXpP_") {
		return 0, fmt.Errorf("bad count %q: want a number like 200000, 200k, 10M", s)
	}
	return int64(math.Round(f * mult)), nil
}

// ParseDistinct reads the distinct-hash count relative to rows: an
// absolute count (see ParseCount) or a percentage such as "20%".
func ParseDistinct(s string, rows int64) (int64, error) {
	t := strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(t, "%"); ok {
		f, err := strconv.ParseFloat(p, 64)
		if err != nil || f <= 0 || f > 100 || strings.ContainsAny(p, "eEnNiIxXpP_") {
			return 0, fmt.Errorf("bad distinct %q: want a count or a percentage in (0, 100]", s)
		}
		return max(1, int64(math.Round(float64(rows)*f/100))), nil
	}
	return ParseCount(t)
}
