package dedup

import (
	"fmt"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/statecol"
	"github.com/infohash/infohash/pipeline/schedule"
)

// thaw stages a copy of the cold state file f (open as src) without the
// rows the batch made hot, which it merges into *warm (sorted by hash):
// the rows of its hits are folded with their batch aggregates and go
// through the policy's reactivation rule, as in a compaction, and every
// row no longer cold leaves the file. Only this file is rewritten: the
// partition's hot files are spliced or kept, so a batch that sights a
// few archived hashes costs about what one that sights hot ones does.
// The returned file has no rows (and is not staged) when none stay cold.
func (r *runner) thaw(tx *dataset.Tx, base *dataset.Table, key string, f dataset.FileInfo, src *statecol.File,
	es []entry, hits []hit, ps *partStats, w *workerBufs, warm *[]schema.State) (dataset.FileInfo, error) {
	path := r.d.FilePath(base, key, f)
	rows, err := src.ReadAllInto(path, w.more)
	if err != nil {
		return dataset.FileInfo{}, fmt.Errorf("dedup: partition %s: %w", key, err)
	}
	w.more = rows[:0]
	for _, h := range hits {
		if h.row >= int64(len(rows)) || rows[h.row].InfoHash != es[h.e].h {
			return dataset.FileInfo{}, fmt.Errorf("dedup: partition %s: %s: row %d does not hold the hash its info_hash column read", key, path, h.row+1)
		}
		st, a := &rows[h.row], &es[h.e].agg
		lastSeen := st.LastSeen
		r.b.fold(st, a)
		r.reactivate(st, a, lastSeen, ps)
	}
	// Split in place: the rows still cold stay at the front, in order.
	var made []schema.State
	cold := rows[:0]
	for i := range rows {
		if rows[i].Tier == schema.TierCold {
			cold = append(cold, rows[i])
		} else {
			made = append(made, rows[i])
		}
	}
	*warm = statecol.MergeSorted(*warm, statecol.SortedRun(made))
	if len(cold) == 0 {
		return dataset.FileInfo{}, nil
	}
	return dataset.WriteStagedAs(tx, dataset.TableState, key, schedule.ColdFileName(), statecol.SortedRun(cold))
}
