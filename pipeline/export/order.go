package export

import (
	"bytes"
	"slices"
)

// sortByHash puts rows in info_hash order, stably, unless they are in it
// already, and returns order (a buffer of one int a row) for the next
// call.
//
// A partition may hold a base file and delta files, and a hot and a cold
// one, each sorted: export is sorted by info_hash as a whole. The rows are
// put in order through a sorted index, each moved once along the cycles
// of the permutation: sort.SliceStable moved rows of ~250 bytes (with the
// write barriers of their pointers) at every one of its swaps, a fifth of
// an arrow export of a stategen state (hot and cold files per partition)
// and a quarter of a magnet one.
func sortByHash[T any](rows []T, order []int) []int {
	cmp := func(i, j int) int { return bytes.Compare(hashOf(&rows[i])[:], hashOf(&rows[j])[:]) }
	sorted := true
	for i := 1; i < len(rows) && sorted; i++ {
		sorted = cmp(i-1, i) <= 0
	}
	if sorted {
		return order
	}
	order = order[:0]
	for i := range rows {
		order = append(order, i)
	}
	slices.SortStableFunc(order, cmp)
	permute(rows, order)
	return order
}

// permute moves rows[order[k]] to rows[k] for every k, each row once
// (and one more copy a cycle); it overwrites order.
func permute[T any](rows []T, order []int) {
	for k := range order {
		if order[k] == k {
			continue
		}
		first := rows[k]
		j := k
		for {
			next := order[j]
			order[j] = j
			if next == k {
				rows[j] = first
				break
			}
			rows[j] = rows[next]
			j = next
		}
	}
}
