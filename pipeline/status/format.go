// Small formatting helpers of the printed report.

package status

import (
	"fmt"
	"sort"
	"strings"
)

// deref is *p, or 0 for a nil p (a count the report does not have).
func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// counts lists m's keys with their counts, the largest first (ties by
// key), or "-" when m is empty.
func counts(m map[string]int64, _ []string) string {
	if len(m) == 0 {
		return "-"
	}
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return m[ks[i]] > m[ks[j]] || m[ks[i]] == m[ks[j]] && ks[i] < ks[j] })
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// humanBytes is n bytes in the largest binary unit under which it is at
// least 1 (GiB, MiB, KiB or B).
func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
