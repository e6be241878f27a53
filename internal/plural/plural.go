// Package plural words a count for people: "1 job", "2 jobs", "0 rows".
package plural

import "strconv"

// Count is n and the noun that counts it: one for 1, else many ("1
// input", "2 inputs", "0 rows").
func Count[N ~int | ~int32 | ~int64](n N, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(int64(n), 10) + " " + many
}
