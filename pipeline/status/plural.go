package status

import "strconv"

// plural is n and the noun that counts it: one for 1, else many ("1
// input", "2 inputs", "0 rows"). status said "1 inputs applied" and "1
// rows".
func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}
