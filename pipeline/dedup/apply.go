package dedup

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"unsafe"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/statecol"
	"github.com/infohash/infohash/pipeline/schedule"
)

// partStats are one partition's dedup counters.
type partStats struct {
	bloomNeg, bloomPos, known, falsePos, fresh, reactivated int64
}

type hashOnly struct {
	InfoHash schema.Hash `parquet:"info_hash"`
}

// readHashes appends the info_hash column of a state file to out, read
// page by page (no row assembly).
func readHashes(path string, out []schema.Hash) ([]schema.Hash, error) {
	f, err := statecol.Open(path)
	if err != nil {
		return out, err
	}
	defer f.Close()
	for _, rg := range f.RowGroups() {
		c, _ := f.Column(rg, "info_hash")
		if c == nil {
			return out, fmt.Errorf("%s: no info_hash column", path)
		}
		n := int(rg.NumRows())
		start := len(out)
		out = slices.Grow(out, n)[:start+n]
		buf := unsafe.Slice((*byte)(unsafe.Pointer(&out[start])), n*20)
		if err := statecol.Fixed(c, 20, buf); err != nil {
			return out[:start], fmt.Errorf("%s: info_hash: %w", path, err)
		}
	}
	return out, nil
}

func hashCmp(x, y schema.Hash) int { return bytes.Compare(x[:], y[:]) }

// applyPartition folds the batch's hashes of partition p into tx.
func (r *runner) applyPartition(tx *dataset.Tx, base *dataset.Table, p byte) (partStats, error) {
	var ps partStats
	es := r.b.sorted(p)
	if len(es) == 0 {
		return ps, nil
	}
	key := fmt.Sprintf("%02x", p)
	files := base.Partitions[key]
	bf, bfi, err := loadBloom(r.d, base, key)
	if err != nil {
		return ps, err
	}
	// Layer 2: the Bloom filter. Without files there is nothing to know.
	var cands []int
	for i := range es {
		if len(files) == 0 || (bf != nil && !bf.Test(es[i].h[:])) {
			ps.bloomNeg++
			continue
		}
		ps.bloomPos++
		cands = append(cands, i)
	}
	// Layer 3: confirm every positive against the exact store, file by
	// file (each file is sorted), noting whether a cold file is touched.
	var existing []schema.Hash
	known := map[int]bool{}
	touchedCold := false
	if len(cands) > 0 {
		for _, f := range files {
			start := len(existing)
			var err error
			if existing, err = readHashes(r.d.FilePath(base, key, f), existing); err != nil {
				return ps, fmt.Errorf("dedup: partition %s: %w", key, err)
			}
			hs := existing[start:]
			for _, i := range cands {
				if _, ok := slices.BinarySearchFunc(hs, es[i].h, hashCmp); ok {
					known[i] = true
					touchedCold = touchedCold || schedule.IsColdFile(f.Name)
				}
			}
		}
	}
	ps.known = int64(len(known))
	ps.falsePos = int64(len(cands) - len(known))
	ps.fresh = int64(len(es) - len(known))

	if len(known) == 0 && len(files) < r.o.MaxFiles {
		return ps, r.appendDelta(tx, base, key, es, files, bf, bfi, existing, len(cands) > 0)
	}
	return ps, r.rewrite(tx, base, key, es, known, touchedCold, &ps)
}

// appendDelta adds a file of new hashes to the partition without touching
// its existing files.
func (r *runner) appendDelta(tx *dataset.Tx, base *dataset.Table, key string, es []entry,
	files []dataset.FileInfo, bf bloomFilter, bfi dataset.FileInfo, existing []schema.Hash, haveExisting bool) error {
	rows := make([]schema.State, len(es))
	for i, e := range es {
		rows[i] = r.b.newState(e, r.now)
	}
	fi, err := dataset.WriteStaged(tx, dataset.TableState, key, rows)
	if err != nil {
		return err
	}
	tx.SetPartition(dataset.TableState, key, append(append([]dataset.FileInfo(nil), files...), fi))
	total := int64(len(es))
	for _, f := range files {
		total += f.Rows
	}
	if bf != nil && total <= bfi.Capacity {
		for _, e := range es {
			bf.Add(e.h[:])
		}
		return stageBloom(tx, key, bf, total, bfi.Capacity)
	}
	// Grow (or create) the filter from the exact store.
	if !haveExisting {
		for _, f := range files {
			var err error
			if existing, err = readHashes(r.d.FilePath(base, key, f), existing); err != nil {
				return fmt.Errorf("dedup: partition %s: %w", key, err)
			}
		}
	}
	for _, e := range es {
		existing = append(existing, e.h)
	}
	nbf, c := bloomOf(existing, r.o.BloomFP)
	return stageBloom(tx, key, nbf, int64(len(existing)), c)
}

// rewrite merges the partition's hot files and the batch into one sorted
// hot file. Cold files (the archived tier, kept apart so that planning
// does not scan them) are rewritten only when the batch saw one of their
// hashes: their rows go to a new cold file, except the hashes a sighting
// reactivated, which join the hot file.
func (r *runner) rewrite(tx *dataset.Tx, base *dataset.Table, key string, es []entry, known map[int]bool, touchedCold bool, ps *partStats) error {
	var old []schema.State
	var kept []dataset.FileInfo
	for _, f := range base.Partitions[key] {
		if schedule.IsColdFile(f.Name) && !touchedCold {
			kept = append(kept, f)
			continue
		}
		rows, err := statecol.ReadStateFile(r.d.FilePath(base, key, f))
		if err != nil {
			return fmt.Errorf("dedup: partition %s: %w", key, err)
		}
		old = append(old, rows...)
	}
	if len(base.Partitions[key])-len(kept) > 1 {
		sort.Slice(old, func(i, j int) bool { return bytes.Compare(old[i].InfoHash[:], old[j].InfoHash[:]) < 0 })
	}
	out := make([]schema.State, 0, len(old)+len(es)-len(known))
	i := 0
	for j, e := range es {
		for i < len(old) && hashCmp(old[i].InfoHash, e.h) < 0 {
			out = append(out, old[i])
			i++
		}
		if known[j] && i < len(old) && old[i].InfoHash == e.h {
			st := old[i]
			i++
			fresh := e.a.last > st.LastSeen
			r.b.fold(&st, e.a)
			if fresh && r.o.Reactivate != nil && r.o.Reactivate(&st, e.a.last) {
				ps.reactivated++
			}
			out = append(out, st)
			continue
		}
		out = append(out, r.b.newState(e, r.now))
	}
	out = append(out, old[i:]...)
	var hot, cold []schema.State
	for k := range out {
		if touchedCold && out[k].Tier == schema.TierCold {
			cold = append(cold, out[k])
		} else {
			hot = append(hot, out[k])
		}
	}
	files := kept
	for _, part := range []struct {
		rows []schema.State
		name string
	}{{hot, dataset.NewName(".parquet")}, {cold, schedule.ColdFileName()}} {
		if len(part.rows) == 0 {
			continue
		}
		fi, err := dataset.WriteStagedAs(tx, dataset.TableState, key, part.name, part.rows)
		if err != nil {
			return err
		}
		files = append(files, fi)
	}
	tx.SetPartition(dataset.TableState, key, files)
	// The filter covers every hash of the partition, kept cold files too.
	hs := make([]schema.Hash, 0, len(out))
	for k := range out {
		hs = append(hs, out[k].InfoHash)
	}
	for _, f := range kept {
		var err error
		if hs, err = readHashes(r.d.FilePath(base, key, f), hs); err != nil {
			return fmt.Errorf("dedup: partition %s: %w", key, err)
		}
	}
	bf, c := bloomOf(hs, r.o.BloomFP)
	return stageBloom(tx, key, bf, int64(len(hs)), c)
}
