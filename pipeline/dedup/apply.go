package dedup

import (
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/statecol"
	"github.com/infohash/infohash/internal/bloom20"
	"github.com/infohash/infohash/pipeline/schedule"
)

// partStats are one partition's dedup counters.
type partStats struct {
	bloomNeg, bloomPos, known, falsePos, fresh int64
	// reactivated counts hashes whose next_retry a sighting pulled closer
	// (reactivated_at set); rewarmed, cold hashes a sighting made hot
	// (with or without a pull).
	reactivated, rewarmed int64
}

// add adds o's counts to s.
func (s *partStats) add(o partStats) {
	s.bloomNeg += o.bloomNeg
	s.bloomPos += o.bloomPos
	s.known += o.known
	s.falsePos += o.falsePos
	s.fresh += o.fresh
	s.reactivated += o.reactivated
	s.rewarmed += o.rewarmed
}

// applyPartition folds the batch's hashes of partition p into tx.
// w holds the calling worker's buffers.
func (r *runner) applyPartition(tx *dataset.Tx, base *dataset.Table, p byte, w *workerBufs) (partStats, error) {
	var ps partStats
	r.b.finishPeers(p)
	es := r.b.sorted(p, w.ents)
	w.ents = es
	if len(es) == 0 {
		return ps, nil
	}
	key := fmt.Sprintf("%02x", p)
	files := base.Partitions[key]
	bf, bfi, err := loadBloom(r.d, base, key, &w.bloom)
	if err != nil {
		return ps, err
	}
	// Layer 2: the Bloom filter. Without rows (no files, or only the
	// 0-row file of an empty table) there is nothing to know.
	none := true
	for _, f := range files {
		none = none && f.Rows == 0
	}
	var cands []int
	var fb bloom20.Filter
	if bf != nil {
		fb = bloom20.Of(bf)
	}
	for i := range es {
		if none || (bf != nil && !fb.Test(&es[i].h)) {
			ps.bloomNeg++
			continue
		}
		ps.bloomPos++
		cands = append(cands, i)
	}
	extendNow(bf, es, cands)
	// Layer 3: confirm every positive against the exact store, file by
	// file (each file is sorted), noting whether a cold file is touched.
	existing := w.hashes[:0]
	defer func() { w.hashes = existing[:0] }()
	known := make([]bool, len(es)) // es[i] is in a file
	nknown := 0
	hits := make([][]hit, len(files))
	// The files stay open for the update's splice or the rewrite.
	opened := make([]*statecol.File, len(files))
	defer func() {
		for _, f := range opened {
			if f != nil {
				f.Close()
			}
		}
	}()
	spliceable := true // every hot file holding a known hash can be spliced
	touchedCold := false
	if len(cands) > 0 {
		for fi, f := range files {
			start := len(existing)
			// Checked whole if a rewrite or a thaw reads its rows (a
			// splice checks every file it copies).
			df := r.d.SourceFile(tx.Base(), dataset.TableState, key, f)
			src, err := statecol.Open(df)
			if err == nil {
				opened[fi] = src
				existing, err = src.AppendHashes(existing)
			}
			if err != nil {
				return ps, fmt.Errorf("dedup: partition %s: %w", key, err)
			}
			canSplice := src.Spliceable() == nil
			hs := existing[start:]
			row := 0
			for _, i := range cands {
				// cands, like es, is in hash order: each search starts
				// where the last one ended.
				row = searchFrom(hs, row, &es[i].h)
				if row < len(hs) && hs[row] == es[i].h && !known[i] {
					known[i] = true
					nknown++
					hits[fi] = append(hits[fi], hit{row: int64(row), e: i})
					if schedule.IsColdFile(f.Name) {
						touchedCold = true // its file is rewritten (thaw), not spliced
					} else {
						spliceable = spliceable && canSplice
					}
				}
			}
		}
	}
	ps.known = int64(nknown)
	ps.falsePos = int64(len(cands) - nknown)
	ps.fresh = int64(len(es) - nknown)

	if nknown == 0 && len(files) < r.o.MaxFiles {
		return ps, r.appendDelta(tx, base, key, es, files, bf, bfi, existing, len(cands) > 0)
	}
	// The update adds a file when there are new hashes or cold ones
	// sighted (made hot): past MaxFiles files the partition is compacted.
	if nknown > 0 && (ps.fresh == 0 && !touchedCold || len(files) < r.o.MaxFiles) && spliceable {
		return ps, r.update(tx, base, key, es, files, opened, hits, known, existing, bf, bfi, &ps, w)
	}
	return ps, r.rewrite(tx, base, key, es, opened, known, touchedCold, &ps, bf, bfi, w)
}

// workerBufs are an apply worker's buffers, reused partition after
// partition: state rows (rewrite: the partition's, and one more file's or
// the cold rows; update: the new ones), the partition's sorted batch
// entries, and the hashes of its files (a 20M-hash state has ~1.5 MB per
// partition).
type workerBufs struct {
	rows   []schema.State
	more   []schema.State
	fresh  []schema.State // update's new rows
	ents   []entry
	hashes []schema.Hash
	bloom  []uint64 // the partition's filter's words (loadBloom)
}

// hit is a known hash found in a state file: its row there and its batch
// entry.
type hit struct {
	row int64
	e   int
}

// update is the incremental path: each hot file holding known hashes is
// spliced (their rows updated in place, only the columns that changed
// re-encoded, every other column chunk copied byte for byte), each cold
// file holding some is rewritten without the hashes the batch made hot
// (thaw), files without any are kept, and the new hashes and those made
// hot go to a file of their own. The partition stays exact (one row per
// hash); dedup compacts it into one file when it reaches MaxFiles.
func (r *runner) update(tx *dataset.Tx, base *dataset.Table, key string, es []entry, files []dataset.FileInfo,
	opened []*statecol.File, hits [][]hit, known []bool, existing []schema.Hash, bf bloomFilter, bfi dataset.FileInfo,
	ps *partStats, w *workerBufs) error {
	out := make([]dataset.FileInfo, 0, len(files)+1)
	var warm []schema.State // rows of cold files made hot, sorted by hash
	for fi, f := range files {
		if len(hits[fi]) == 0 {
			out = append(out, f)
			continue
		}
		if schedule.IsColdFile(f.Name) {
			nf, err := r.thaw(tx, base, key, f, opened[fi], es, hits[fi], ps, w, &warm)
			if err != nil {
				return err
			}
			if nf.Rows > 0 {
				out = append(out, nf)
			}
			continue
		}
		nf, err := r.spliceFile(tx, base, key, f, opened[fi], es, hits[fi], ps)
		if err != nil {
			return err
		}
		out = append(out, nf)
	}
	// The new rows go in the worker's buffer, kept for the next partition
	// (allocated and grown afresh, they and a merge's copy of them with no
	// warm rows were 2% of an incremental dedup, faults included).
	fresh := w.fresh[:0]
	defer func() { w.fresh = fresh[:0] }()
	for i := range es {
		if !known[i] {
			fresh = append(fresh, r.b.newState(&es[i], r.now))
		}
	}
	delta := fresh
	if len(warm) > 0 {
		delta = statecol.MergeSorted(warm, fresh)
	}
	if len(delta) > 0 {
		nf, err := dataset.WriteStaged(tx, dataset.TableState, key, delta)
		if err != nil {
			return err
		}
		out = append(out, nf)
	}
	tx.SetPartition(dataset.TableState, key, out)
	var total int64
	for _, f := range out {
		total += f.Rows
	}
	if ok, err := extendBloom(tx, key, bf, bfi, total); ok {
		return err
	}
	// existing holds every file's hashes: there were candidates.
	for k := range fresh {
		existing = append(existing, fresh[k].InfoHash)
	}
	nbf, c := bloomOf(existing, r.o.BloomFP)
	return stageBloom(tx, key, nbf, int64(len(existing)), c)
}

// reactivate applies the scheduler's rule for the batch's fresh sightings
// of a known hash (those after lastSeen, what the state knew before the
// batch was folded in). The sighting that counts is the first fresh one,
// as it would be had the batch's inputs come in separate runs; failing
// that (the rule refuses it, e.g. too soon after the last reactivation),
// the newest, as a later run would have tried, with the newest fresh
// announce_peer, which the rule weighs apart (schedule.Reactivate: an
// announce reactivates sooner after the last reactivation). The aggregate
// keeps only the three: a sighting between them is not tried.
//
// It counts in ps what the rule did, read from the row: reactivated when
// next_retry moved (the rule only ever pulls it closer), rewarmed when a
// cold hash became hot. A cold hash already due is rewarmed, not
// reactivated (README: "just hot again").
func (r *runner) reactivate(st *schema.State, a *agg, lastSeen int64, ps *partStats) {
	if r.o.Reactivate == nil || a.last <= lastSeen {
		return
	}
	retry, cold := st.NextRetry, st.Tier == schema.TierCold
	ann := r.b.announcedAt(&a.h)
	if ann <= lastSeen {
		ann = 0 // none, or not fresh
	}
	first := r.b.first(a)
	firstAnn := int64(0) // the first sighting's, if it was the newest announce
	if ann == first {
		firstAnn = ann
	}
	if !(first > lastSeen && first < a.last && r.o.Reactivate(st, first, firstAnn)) {
		r.o.Reactivate(st, a.last, ann)
	}
	if st.NextRetry != retry {
		ps.reactivated++
	}
	if cold && st.Tier != schema.TierCold {
		ps.rewarmed++
	}
}

// foldColumns are the state columns batch.fold and schedule.Reactivate
// read or write: the only ones a splice decodes. (info_hash is known
// without decoding it and is filled in from the batch.)
var foldColumns = statecol.ColumnsNamed("info_hash_v2", "hash_type", "first_seen", "last_seen", "seen_count",
	"last_source", "activity", "metadata_status", "last_attempt", "last_failure", "next_retry", "tier",
	"backoff_step", "bad_metadata", "reactivated_at", "first_source", "info_hash_v2_source")

// peersColumn is the state's peers list and its peers_at, which
// batch.fold extends with the batch's announced peers (foldPeers).
var peersColumn = statecol.ColumnsNamed("peers", "peers_at")

// spliceFile stages a copy of state file f (open as src, from reading its
// hashes) with the rows of its hits folded with their batch aggregates.
func (r *runner) spliceFile(tx *dataset.Tx, base *dataset.Table, key string, f dataset.FileInfo, src *statecol.File,
	es []entry, hits []hit, ps *partStats) (dataset.FileInfo, error) {
	path := r.d.FilePath(base, key, f)
	from := func(first int64) int { return sort.Search(len(hits), func(x int) bool { return hits[x].row >= first }) }
	name := dataset.NewName(".parquet")
	if schedule.IsColdFile(f.Name) {
		name = schedule.ColdFileName()
	}
	wrapWrite := func(err error) error { return fmt.Errorf("dedup: partition %s: %s: %w", key, f.Name, err) }
	nf, err := writeStagedWrap(tx, dataset.TableState, key, name, f.Rows, func(w io.Writer) error {
		var sel []int32
		out := &outputErr{w: w}
		need := foldColumns
		if r.b.hasPeers(es[hits[0].e].h[0]) {
			need |= peersColumn // decoded only when the batch has announced peers here
		}
		err := statecol.Splice(out, src, need, func(first, n int64) []int32 {
			sel = sel[:0]
			for j := from(first); j < len(hits) && hits[j].row < first+n; j++ {
				sel = append(sel, int32(hits[j].row-first))
			}
			return sel
		}, func(first int64, sel []int32, rows []schema.State) (statecol.Columns, error) {
			var mask statecol.Columns
			j0 := from(first)
			for k := range sel {
				// The row is the hash's: both come from this file's sorted
				// info_hash column (statecol.AppendHashes), so it is not decoded again.
				st, a := &rows[k], &es[hits[j0+k].e].agg
				st.InfoHash = a.h // not decoded, but Reactivate's spread reads it
				old := *st
				r.b.fold(st, a)
				r.reactivate(st, a, old.LastSeen, ps)
				mask |= statecol.Changed(&old, st)
			}
			return mask, nil
		})
		if _, ok := errors.AsType[*rowio.FooterError](err); ok && out.err == nil {
			return err // the state file does not match its manifest: it names the file
		}
		if err != nil && out.err == nil {
			// Not a failed write: reading the (damaged) state file did.
			return &dataset.SourceError{Path: path, Err: err}
		}
		return err
	}, wrapWrite)
	if se := (*dataset.SourceError)(nil); errors.As(err, &se) {
		return nf, fmt.Errorf("dedup: partition %s: %w", key, err)
	}
	if _, ok := errors.AsType[*rowio.FooterError](err); ok {
		return nf, fmt.Errorf("dedup: partition %s: %w", key, err)
	}
	if err != nil {
		return nf, wrapWrite(err)
	}
	return nf, nil
}

// writeStagedWrap stages a splice (a variable for tests: to fail its
// writes after it returns).
var writeStagedWrap = dataset.WriteStagedWrap

// outputErr remembers the first error of writes to w: it tells a failed
// write of the output from a failed read of the input.
type outputErr struct {
	w   io.Writer
	err error
}

func (o *outputErr) Write(b []byte) (int, error) {
	n, err := o.w.Write(b)
	if err != nil && o.err == nil {
		o.err = err
	}
	return n, err
}

// ReadFrom hands r to w's ReadFrom when it has one (fsutil.Uncached reads
// a splice's copied column chunks straight into its buffer); an error
// that is not r's is the output's, even after r failed too.
func (o *outputErr) ReadFrom(r io.Reader) (int64, error) {
	rf, ok := o.w.(io.ReaderFrom)
	if !ok {
		return io.Copy(struct{ io.Writer }{o}, r) // Write, not ReadFrom again
	}
	src := &readErr{r: r}
	n, err := rf.ReadFrom(src)
	if err != nil && (src.err == nil || !errors.Is(err, src.err)) && o.err == nil {
		o.err = err
	}
	return n, err
}

// readErr remembers the first error of reads from r other than io.EOF.
type readErr struct {
	r   io.Reader
	err error
}

func (e *readErr) Read(b []byte) (int, error) {
	n, err := e.r.Read(b)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

// appendDelta adds a file of new hashes to the partition without touching
// its existing files.
func (r *runner) appendDelta(tx *dataset.Tx, base *dataset.Table, key string, es []entry,
	files []dataset.FileInfo, bf bloomFilter, bfi dataset.FileInfo, existing []schema.Hash, haveExisting bool) error {
	// The rows are made from the aggregates as the writer asks for them:
	// a slice of them all cost more than laying out their columns.
	fi, err := dataset.WriteStagedWith(tx, dataset.TableState, key, dataset.NewName(".parquet"), int64(len(es)),
		func(w io.Writer) error {
			return statecol.WriteStateFunc(w, len(es), func(start int, dst []schema.State) {
				for i := range dst {
					r.b.setNewState(&dst[i], &es[start+i], r.now)
				}
			})
		})
	if err != nil {
		return err
	}
	tx.SetPartition(dataset.TableState, key, append(append([]dataset.FileInfo(nil), files...), fi))
	total := int64(len(es))
	for _, f := range files {
		total += f.Rows
	}
	if bf != nil && total <= bfi.Capacity { // extendNow added es
		return stageBloom(tx, key, bf, total, bfi.Capacity)
	}
	// Grow (or create) the filter from the exact store. The files'
	// whole-file CRC-32C is not checked here: only their footers
	// (FooterSum) and info_hash pages (page CRCs) are read, and those
	// checks cover every byte the filter is built from. Checking the
	// rest would read its other 185 MB too: +102-246 ms (median 141) on
	// top of ReadHashes of a 20M-hash state's 566 MB (215-497 ms,
	// median 342), page cache warm.
	if !haveExisting {
		for _, f := range files {
			var err error
			if existing, err = statecol.ReadHashes(r.d.DataFile(tx.Base(), dataset.TableState, key, f), existing); err != nil {
				return fmt.Errorf("dedup: partition %s: %w", key, err)
			}
		}
	}
	nbf, c := newBloom(int64(len(existing)+len(es)), r.o.BloomFP)
	f := bloom20.Of(nbf)
	for i := range existing {
		f.Add(&existing[i])
	}
	for i := range es {
		f.Add(&es[i].h)
	}
	return stageBloom(tx, key, nbf, int64(len(existing)+len(es)), c)
}

// extendNow adds the batch's Bloom negatives (es less cands, the
// positives) to the partition's filter bf, if any, while its words are in
// cache: added once the partition's files were spliced, each bit set
// missed it (24 ns, 1.3% of an incremental dedup). A Bloom positive that
// proves new (a false positive) has all its bits set already, so bf then
// holds every hash of the batch, what the old filter extended with the
// new hashes holds. A batch's Test results are those of the old filter:
// it is extended only once they are all in.
func extendNow(bf bloomFilter, es []entry, cands []int) {
	if bf == nil {
		return
	}
	f := bloom20.Of(bf)
	j := 0
	for i := range es {
		if j < len(cands) && cands[j] == i {
			j++
			continue
		}
		f.Add(&es[i].h)
	}
}

// extendBloom stages the partition's old filter, extended by extendNow,
// if it has room for the partition's total keys; ok is false when the
// caller must build a new one.
func extendBloom(tx *dataset.Tx, key string, bf bloomFilter, bfi dataset.FileInfo, total int64) (ok bool, err error) {
	if bf == nil || total > bfi.Capacity {
		return false, nil
	}
	return true, stageBloom(tx, key, bf, total, bfi.Capacity)
}
