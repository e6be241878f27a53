// The splice path of statePartition: a few results in a big partition
// change a few rows of its hot files (and of its cold files, when results
// touch them), which are copied with those rows changed (statecol.Splice:
// only the columns that changed re-encoded, every other column chunk
// copied byte for byte) instead of decoded and written whole.

package merge

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/statecol"
	"github.com/infohash/infohash/pipeline/schedule"
)

// spliceNeed are the columns a spliced row is decoded with: every one but
// info_hash, which the file's hash column (read to find the rows) gives.
var spliceNeed = statecol.AllColumns &^ statecol.ColumnsNamed("info_hash")

// hotFile is a file of a partition on the splice path: open, its hashes
// read, and the rows a splice changes. It is a hot file, or a cold one
// (cold) when results touch the partition's cold files.
type hotFile struct {
	fi      dataset.FileInfo
	path    string
	src     *statecol.File
	hashes  []schema.Hash
	changes []change // sorted by row
	cold    bool     // a cold file: spliced under a cold file's name
}

// change is a row of a hot file that the splice changes: the row of a
// hash with results (results[lo:hi]), or, lo == hi, one archived now
// that no result touched.
type change struct {
	row    int64
	lo, hi int
}

// maxColdInHot is how many tier=cold rows a partition's hot files may
// hold after a splice, of hotRows in all: archiving in place leaves cold
// rows in hot files (plan-retries reads a row's tier, not its file's
// name), up to a 64th of them; past that the full path moves them all to
// a cold file.
func maxColdInHot(hotRows int64) int64 { return max(256, hotRows/64) }

// An archival says whether merge archives a row now, and by which rule
// (runner.archives).
type archival uint8

const (
	keep            archival = iota // not archived now
	archiveByRule                   // schedule.ShouldArchive: the policy's thresholds
	archiveDeferred                 // schedule.ShouldArchiveDeferred only: deferred while failed, short of min_attempts
)

// archives reports whether merge archives the row st now: a hot row the
// policy says to (schedule.ShouldArchive: archiveByRule), or one this
// merge deferred while failed (penalised: applyHash) that has been unseen
// for archive.unseen (schedule.ShouldArchiveDeferred, whatever its
// attempts: archiveDeferred when the policy's rule alone would not), but
// not one only released rows touched (untouched) nor one whose lease is
// live, unless a result of this merge ended it (released). The full path
// and the splice path both ask it, of every row of the partition's hot
// files, and of its cold files when a result touches one (the full path
// then reads them all).
func (r *runner) archives(st *schema.State, untouched, released, penalised bool) archival {
	if st.Tier == schema.TierCold || untouched {
		return keep
	}
	a := keep
	switch {
	case schedule.ShouldArchive(r.p, st, r.now):
		a = archiveByRule
	case penalised && schedule.ShouldArchiveDeferred(r.p, st, r.now):
		a = archiveDeferred
	}
	if a != keep && !released && r.leases.Live(st.InfoHash, r.now) {
		return keep
	}
	return a
}

// splicePartition applies results (sorted by hash, then attempt time) to
// the hot files of partition key (files: all of its files) by splicing
// them, when it can: no result for a hash the files it reads lack (merge
// would add a row), every file to change spliceable, and at most
// maxColdInHot tier=cold rows in the hot files afterwards. With
// coldTouched (a result is for a hash of a cold file) it reads the cold
// files too, as the full path does: their rows with results, and their
// tier=hot rows due to archive, are changed in place, the file keeping a
// cold file's name; a cold file with no row to change is kept as it is.
// coldHs is then the cold files' hashes, in the order of files (read by
// readColdHashes, not again here), and nil when no result touches them.
// ok is false (and nothing applied) when the full path must run instead.
func (r *runner) splicePartition(key string, files []dataset.FileInfo, results []result, coldHs []coldFile) (out partOut, ok bool, err error) {
	coldTouched := coldHs != nil
	if tooManyForSplice(files, results, coldHs) {
		return out, false, nil // a big batch: the bound below would fail after the scans
	}
	var hot []*hotFile
	sb := scanBufs.Get().(*scanBuf)
	defer func() {
		for _, hf := range hot {
			hf.src.Close()
		}
		scanBufs.Put(sb)
	}()
	hashes := sb.hashes[:0]
	var hotRows int64
	nextCold := 0
	for _, f := range files {
		isCold := schedule.IsColdFile(f.Name)
		if isCold && !coldTouched {
			continue
		}
		df := r.d.DataFile(r.base, dataset.TableState, key, f)
		src, err := statecol.Open(df)
		if err != nil {
			return out, false, fmt.Errorf("merge: state partition %s: %w", key, err)
		}
		hf := &hotFile{fi: f, path: df.Path(), src: src, cold: isCold}
		hot = append(hot, hf)
		start := len(hashes)
		if isCold {
			hashes = append(hashes, coldHs[nextCold].hashes...) // read by readColdHashes
			nextCold++
		} else if hashes, err = src.AppendHashes(hashes); err != nil {
			return out, false, fmt.Errorf("merge: state partition %s: %w", key, err)
		}
		if !sortedHashes(hashes[start:]) {
			return out, false, nil // not a state file as merge writes them: the full path reads it
		}
		hf.hashes = hashes[start:] // for now: hashes may move as it grows
		if !isCold {
			hotRows += int64(len(hf.hashes))
		}
	}
	sb.hashes = hashes
	for i, at := 0, 0; i < len(hot); i++ {
		n := len(hot[i].hashes)
		hot[i].hashes = hashes[at : at+n : at+n]
		at += n
	}
	var alone [][2]int // released rows only, of hashes the state lacks
	var hitHot int64   // hot rows with results that count: they may be archived
	for i := 0; i < len(results); {
		h := results[i].InfoHash
		j := i
		for j < len(results) && results[j].InfoHash == h {
			j++
		}
		found := false
		for _, hf := range hot {
			if row, in := slices.BinarySearchFunc(hf.hashes, h, hashCmp); in {
				hf.changes = append(hf.changes, change{row: int64(row), lo: i, hi: j})
				found = true
				break
			}
		}
		if !found && results[i].Outcome != schema.OutcomeReleased {
			return out, false, nil // an unknown hash: the full path adds its row
		}
		if !found {
			alone = append(alone, [2]int{i, j})
		}
		i = j
	}
	// Rows no result touched are archived too when the policy's
	// thresholds have passed: read the columns the rule needs of every
	// row, and count the cold rows the hot files will hold at most (a
	// cold file's rows, cold or not, are no part of that bound). The hot
	// files come first, and a scan stops once they hold too many: the
	// full path reads them all again (a merge whose archiving goes past
	// the bound scanned every file first).
	var cold int64
	bound := maxColdInHot(hotRows)
	for _, coldFiles := range []bool{false, true} {
		for _, hf := range hot {
			if hf.cold != coldFiles {
				continue
			}
			limit := int64(math.MaxInt64) // a cold file's rows are no part of the bound
			if !hf.cold {
				limit = bound - cold - hitHot
			}
			n, hits, err := r.archiveScan(hf, results, sb, limit)
			if err != nil {
				return out, false, fmt.Errorf("merge: state partition %s: %w", key, err)
			}
			if hf.cold {
				continue
			}
			if cold, hitHot = cold+n, hitHot+hits; cold+hitHot > bound {
				return out, false, nil
			}
		}
	}
	for _, hf := range hot {
		if len(hf.changes) > 0 && hf.src.Spliceable() != nil {
			return out, false, nil // an older format: rewritten
		}
	}

	released := map[schema.Hash]bool{}
	for _, g := range alone {
		r.applyHash(nil, results[g[0]:g[1]], &out, released)
	}
	next := make([]dataset.FileInfo, 0, len(files))
	k := 0
	for _, f := range files {
		if !coldTouched && schedule.IsColdFile(f.Name) {
			next = append(next, f) // kept as it is
			continue
		}
		hf := hot[k]
		k++
		if len(hf.changes) == 0 {
			next = append(next, f)
			continue
		}
		nf, err := r.spliceHot(key, hf, results, &out, released)
		if err != nil {
			return out, false, err
		}
		next = append(next, nf)
	}
	r.mu.Lock()
	r.tx.SetPartition(dataset.TableState, key, next)
	r.mu.Unlock()
	out.spliced = true
	return out, true, nil
}

// tooManyForSplice reports whether the results alone break the bound on
// cold rows in hot files: every hash with a result that counts (not only
// released rows) and not in a cold file (cold: their hashes, nil when no
// result touches them) is a hot file's row that may be archived, or the
// state lacks it and the full path runs anyway. splicePartition would
// come to the same answer after reading every hot file's hashes and
// archive columns (and those of the cold files, when touched); a merge of
// 1M results into a 20M-hash state spent 1.6 s of CPU on that before.
func tooManyForSplice(files []dataset.FileInfo, results []result, cold []coldFile) bool {
	var hotRows, counted int64
	for _, f := range files {
		if !schedule.IsColdFile(f.Name) {
			hotRows += f.Rows
		}
	}
	for i := 0; i < len(results); i++ {
		if (i == 0 || results[i].InfoHash != results[i-1].InfoHash) && results[i].Outcome != schema.OutcomeReleased &&
			!slices.ContainsFunc(cold, func(c coldFile) bool { return c.has(results[i].InfoHash) }) {
			counted++
		}
	}
	return counted > maxColdInHot(hotRows)
}

// sortedHashes reports whether hs is in order (a state file's
// info_hash column is): most neighbours differ in their first 8 bytes.
func sortedHashes(hs []schema.Hash) bool {
	for i := 1; i < len(hs); i++ {
		a, b := binary.BigEndian.Uint64(hs[i-1][:8]), binary.BigEndian.Uint64(hs[i][:8])
		if a > b || a == b && hashCmp(hs[i-1], hs[i]) > 0 {
			return false
		}
	}
	return true
}

// resize returns s with n elements, reusing its array when it can.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// spliceHot stages a copy of file hf with its changes: each changed
// row's results applied as the full path applies them (runner.applyHash,
// counted in out), then archived if merge archives it (runner.archives).
// The row keeps its place in the file, archived or not, and a cold file's
// copy is a cold file (schedule.ColdFileName), a row an ok result made
// hot in it included: plan-retries reads that row's tier.
func (r *runner) spliceHot(key string, hf *hotFile, results []result, out *partOut, released map[schema.Hash]bool) (dataset.FileInfo, error) {
	from := func(first int64) int {
		return sort.Search(len(hf.changes), func(x int) bool { return hf.changes[x].row >= first })
	}
	r.mu.Lock()
	tx := r.tx
	r.mu.Unlock()
	name := dataset.NewName(".parquet")
	if hf.cold {
		name = schedule.ColdFileName()
	}
	nf, err := dataset.WriteStagedWith(tx, dataset.TableState, key, name, hf.fi.Rows, func(w io.Writer) error {
		var sel []int32
		ow := &writeErr{w: w}
		err := statecol.Splice(ow, hf.src, spliceNeed, func(first, n int64) []int32 {
			sel = sel[:0]
			for j := from(first); j < len(hf.changes) && hf.changes[j].row < first+n; j++ {
				sel = append(sel, int32(hf.changes[j].row-first))
			}
			return sel
		}, func(first int64, sel []int32, rows []schema.State) (statecol.Columns, error) {
			var mask statecol.Columns
			j0 := from(first)
			for k := range sel {
				ch, st := hf.changes[j0+k], &rows[k]
				// The row is the hash's: both come from the file's sorted
				// info_hash column, which Splice does not decode again.
				st.InfoHash = hf.hashes[ch.row]
				old := cloneState(st)
				untouched, penalised := false, false
				if ch.hi > ch.lo {
					// Released rows only: the row stays as it was but for
					// the lease they end, and is not archived now.
					untouched = results[ch.lo].Outcome == schema.OutcomeReleased
					penalised = r.applyHash(st, results[ch.lo:ch.hi], out, released)
				}
				if a := r.archives(st, untouched, released[st.InfoHash], penalised); a != keep {
					st.Tier = schema.TierCold
					out.archive(a)
				}
				mask |= statecol.Changed(&old, st)
			}
			return mask, nil
		})
		if _, ok := errors.AsType[*rowio.FooterError](err); ok && ow.err == nil {
			return err // the state file does not match its manifest: it names the file
		}
		if err != nil && ow.err == nil {
			// Not a failed write: reading the (damaged) state file did.
			return &dataset.SourceError{Path: hf.path, Err: err}
		}
		return err
	})
	if se := (*dataset.SourceError)(nil); errors.As(err, &se) {
		return nf, fmt.Errorf("merge: state partition %s: %w", key, err)
	}
	if _, ok := errors.AsType[*rowio.FooterError](err); ok {
		return nf, fmt.Errorf("merge: state partition %s: %w", key, err)
	}
	if err != nil {
		return nf, fmt.Errorf("merge: state partition %s: %s: %w", key, hf.fi.Name, err)
	}
	return nf, nil
}

// cloneState is a copy of st that shares no array with it: applyResult
// edits avoid_peers and peers in place (a penalised endpoint moved to the
// end keeps the list's length), which a shallow copy would follow and
// statecol.Changed would miss.
func cloneState(st *schema.State) schema.State {
	c := *st
	c.InfoHashV2 = slices.Clone(st.InfoHashV2)
	c.AvoidPeers = slices.Clone(st.AvoidPeers)
	c.Peers = slices.Clone(st.Peers)
	return c
}

// writeErr remembers the first error of writes to w: it tells a failed
// write of the output from a failed read of the input.
type writeErr struct {
	w   io.Writer
	err error
}

func (o *writeErr) Write(b []byte) (int, error) {
	n, err := o.w.Write(b)
	if err != nil && o.err == nil {
		o.err = err
	}
	return n, err
}
