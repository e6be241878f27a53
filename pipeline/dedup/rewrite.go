package dedup

import (
	"fmt"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/statecol"
	"github.com/infohash/infohash/pipeline/schedule"
)

// rewrite merges the partition's hot files and the batch into one sorted
// hot file. Cold files (the archived tier, kept apart so that planning
// does not scan them) are rewritten only when the batch saw one of their
// hashes: their rows go to a new cold file, except the hashes a sighting
// reactivated, which join the hot file.
//
// Rows are decoded into w.rows (the worker's, reused partition after
// partition, sized once for every row the partition will have), each
// further file into w.more and merged in (statecol.ReadRun): every file is sorted, so the
// partition is a merge of sorted runs, not a sort of their concatenation
// (which, on State's wide rows, cost more than decoding them). Known
// hashes are updated in place and the new ones merged in from the end.
func (r *runner) rewrite(tx *dataset.Tx, base *dataset.Table, key string, es []entry, opened []*statecol.File,
	known []bool, touchedCold bool, ps *partStats, bf bloomFilter, bfi dataset.FileInfo, w *workerBufs) error {
	var kept []dataset.FileInfo
	var read []int                  // indexes of the files read, in base.Partitions[key] and opened
	size := len(es) - int(ps.known) // the new rows
	for fi, f := range base.Partitions[key] {
		if schedule.IsColdFile(f.Name) && !touchedCold {
			kept = append(kept, f)
			continue
		}
		read = append(read, fi)
		size += int(f.Rows)
	}
	if cap(w.rows) < size {
		w.rows = make([]schema.State, 0, size)
	}
	// A file applyPartition opened (to search its hashes) is decoded as
	// it is, without parsing its footer again.
	dfs := make([]rowio.DataFile, len(read))
	opens := make([]*statecol.File, len(read))
	for k, fi := range read {
		dfs[k] = r.d.SourceFile(tx.Base(), dataset.TableState, key, base.Partitions[key][fi])
		opens[k] = opened[fi]
	}
	old, err := statecol.ReadRun(dfs, opens, w.rows, &w.more)
	if err != nil {
		return fmt.Errorf("dedup: partition %s: %w", key, err)
	}
	defer func() {
		if cap(old) > cap(w.rows) {
			w.rows = old[:0]
		}
	}()
	fresh := make([]schema.State, 0, len(es)-int(ps.known))
	i := 0
	for j := range es {
		e := &es[j]
		for i < len(old) && hashCmp(old[i].InfoHash, e.h) < 0 {
			i++
		}
		if known[j] && i < len(old) && old[i].InfoHash == e.h {
			st := &old[i]
			i++
			a := &e.agg
			lastSeen := st.LastSeen
			r.b.fold(st, a)
			r.reactivate(st, a, lastSeen, ps)
			continue
		}
		fresh = append(fresh, r.b.newState(e, r.now))
	}
	out := statecol.MergeSorted(old, fresh)
	old = out // the deferred hand-back keeps the (possibly grown) array as the buffer
	hot, cold := out, []schema.State(nil)
	if touchedCold {
		// Split in place: hot rows stay at the front, in order; the cold
		// ones go to w.more, free once the files are merged.
		hot, cold = out[:0], w.more[:0]
		defer func() { w.more = cold[:0] }()
		for k := range out {
			if out[k].Tier == schema.TierCold {
				cold = append(cold, out[k])
			} else {
				hot = append(hot, out[k])
			}
		}
	}
	files, err := schedule.WriteTiers(kept, hot, cold, func(name string, rows []schema.State) (dataset.FileInfo, error) {
		return dataset.WriteStagedAs(tx, dataset.TableState, key, name, rows)
	})
	if err != nil {
		return err
	}
	tx.SetPartition(dataset.TableState, key, files)
	// A rewrite only adds hashes: while the old filter has room, it is
	// staged with the new ones (extendNow) instead of rebuilt from every
	// hash.
	total := int64(len(hot) + len(cold))
	for _, f := range kept {
		total += f.Rows
	}
	if ok, err := extendBloom(tx, key, bf, bfi, total); ok {
		return err
	}
	// The filter covers every hash of the partition, kept cold files too.
	hs := make([]schema.Hash, 0, len(hot)+len(cold))
	for k := range hot {
		hs = append(hs, hot[k].InfoHash)
	}
	for k := range cold {
		hs = append(hs, cold[k].InfoHash)
	}
	for _, f := range kept {
		var err error
		if hs, err = statecol.ReadHashes(r.d.DataFile(tx.Base(), dataset.TableState, key, f), hs); err != nil {
			return fmt.Errorf("dedup: partition %s: %w", key, err)
		}
	}
	bf, c := bloomOf(hs, r.o.BloomFP)
	return stageBloom(tx, key, bf, int64(len(hs)), c)
}
