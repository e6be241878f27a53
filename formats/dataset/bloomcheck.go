package dataset

import (
	"fmt"
	"maps"
	"slices"
)

// Dedup trusts a Bloom filter's "no" about a state partition: a hash the
// filter has not seen is new, and gets a row without a look at the
// partition's files. A writer that adds hashes to a partition and carries
// its old filter over would have dedup add a second row for each of them.
// Every filter's manifest entry counts the keys it holds (its Rows: dedup
// records the partition's rows when it builds or extends one), so a
// commit can tell a filter that cannot hold every hash of its partition:
// it refuses to publish one (checkBlooms). A writer that only rewrites
// rows (merge updating known hashes, archiving them to a cold file) keeps
// the count it found; one that adds hashes rebuilds the filter (dedup) or
// drops it (Tx.DropBloom: merge).

// checkBlooms reports the first state partition of m, by key, whose Bloom
// filter counts fewer keys than the partition's files, hot and cold, have
// rows (nil if there is none).
func (m *Manifest) checkBlooms() error {
	t := m.Tables[TableState]
	if t == nil {
		return nil
	}
	for _, key := range slices.Sorted(maps.Keys(t.Blooms)) {
		f := t.Blooms[key]
		var rows int64
		for _, d := range t.Partitions[key] {
			rows += d.Rows
		}
		if f.Rows < rows {
			return fmt.Errorf("table %s: partition %s: Bloom filter %s counts %d keys, fewer than the partition's %d rows (a writer added hashes without rebuilding or dropping the filter)",
				TableState, key, f.Name, f.Rows, rows)
		}
	}
	return nil
}

// dropUncounted drops the Bloom filters the transaction carries over from
// its base whose entry counts no keys (rows 0 or absent) for a state
// partition that now has rows: no build wrote such an entry (dedup has
// recorded every filter's keys from the first), so its count is unknown,
// and checkBlooms could neither pass it nor fairly refuse the writer that
// carried it. Without a filter dedup checks every hash against the
// partition's files and builds a new filter from them. A filter the
// transaction staged itself is left to checkBlooms.
func (tx *Tx) dropUncounted() {
	t := tx.next.Tables[TableState]
	if t == nil {
		return
	}
	base := tx.base.Table(TableState)
	for _, key := range slices.Sorted(maps.Keys(t.Blooms)) {
		f := t.Blooms[key]
		if f.Rows != 0 || f != base.Blooms[key] {
			continue
		}
		for _, d := range t.Partitions[key] {
			if d.Rows > 0 {
				tx.DropBloom(TableState, key)
				break
			}
		}
	}
}
