package dedup

import "slices"

// sortFew sorts s by less (a strict order): insertion sort up to cutoff
// elements, the usual few (a bucket of entries, one aggregate's peers),
// pdqsort past that. One body for both: the comparison is the only
// difference. less takes its arguments by value: a pointer to a local
// handed to a func value escapes, and moved e, x and y to the heap (an
// allocation per element sorted: 0.2 s more CPU in a 10M dedup).
func sortFew[T any](s []T, cutoff int, less func(x, y T) bool) {
	if len(s) > cutoff {
		slices.SortFunc(s, func(x, y T) int {
			if less(x, y) {
				return -1
			}
			if less(y, x) {
				return 1
			}
			return 0
		})
		return
	}
	for i := 1; i < len(s); i++ {
		e := s[i]
		j := i
		for j > 0 && less(e, s[j-1]) {
			s[j] = s[j-1]
			j--
		}
		s[j] = e
	}
}
