package merge

import (
	"fmt"
	"slices"
	"sort"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/leases"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/statecol"
	"github.com/infohash/infohash/pipeline/schedule"
)

type hashOnly struct {
	InfoHash schema.Hash `parquet:"info_hash"`
}

// hashCmp orders hashes as state files are sorted (schema.CompareHash).
func hashCmp(a, b schema.Hash) int { return schema.CompareHash(a, b) }

// partOut is what applying one partition's results produced.
type partOut struct {
	verdicts [numVerdicts]int64
	attempts map[string]int64 // attempts applied by outcome (released rows are none)
	unknown  int64
	archived int64
	// archivedDeferred: of archived, the rows archived only as deferred
	// while failed and long unseen (archiveDeferred).
	archivedDeferred int64
	// reactivated: failures applied after which a sighting made while
	// the job was out reactivated the hash (applyResult).
	reactivated int64
	released    []schema.Hash
	torrents    []torrentRow
	spliced     bool // the hot files were spliced (splicePartition), not rewritten
}

// archive counts a row archived now by a (not keep).
func (o *partOut) archive(a archival) {
	o.archived++
	if a == archiveDeferred {
		o.archivedDeferred++
	}
}

// statePartition applies results (sorted by hash, then attempt time) to
// state partition key and stages its new files: one hot file and the cold
// files (kept as they were unless a result touched a cold hash, plus one
// for hashes archived now).
//
// The files may be spliced instead (splicePartition: the rows that
// change, changed in place, and the hashes archived now left in their
// file with tier cold; the cold files too when a result touches one),
// the common case of a merge of a few results per partition of a big
// state.
//
// buf is the calling worker's row buffer, reused partition after partition.
func (r *runner) statePartition(key string, results []result, buf *[]schema.State) (partOut, error) {
	var out partOut
	t := r.base.Table(dataset.TableState)
	var hotFiles, coldFiles []dataset.FileInfo
	for _, f := range t.Partitions[key] {
		if schedule.IsColdFile(f.Name) {
			coldFiles = append(coldFiles, f)
		} else {
			hotFiles = append(hotFiles, f)
		}
	}
	coldHs, err := r.readColdHashes(key, coldFiles)
	if err != nil {
		return out, err
	}
	coldTouched := touchesCold(coldHs, results)
	if !r.fullPath {
		if !coldTouched {
			coldHs = nil // the splice path reads no cold file
		}
		sout, ok, err := r.splicePartition(key, t.Partitions[key], results, coldHs)
		if err != nil || ok {
			return sout, err
		}
	}
	// Size the worker's buffer for every row this partition can end up
	// with (the manifest knows the files' rows), so that merging in cold
	// files and new hashes never copies the rows to a bigger array
	// (a 100M-hash merge: 31 s -> 26 s).
	need := int64(len(results))
	for _, f := range hotFiles {
		need += f.Rows
	}
	if coldTouched {
		for _, f := range coldFiles {
			need += f.Rows
		}
	}
	if int64(cap(*buf)) < need {
		*buf = make([]schema.State, 0, need)
	}
	read := hotFiles
	if coldTouched {
		read = slices.Concat(hotFiles, coldFiles)
		coldFiles = nil
	}
	dfs := make([]rowio.DataFile, len(read))
	for i, f := range read {
		dfs[i] = r.d.SourceFile(r.base, dataset.TableState, key, f) // each checked whole: its rows are rewritten
	}
	var more []schema.State // the files after the first, one at a time
	rows, err := statecol.ReadRun(dfs, nil, *buf, &more)
	if err != nil {
		return out, fmt.Errorf("merge: state partition %s: %w", key, err)
	}
	defer func() {
		if cap(rows) > cap(*buf) {
			*buf = rows[:0]
		}
	}()

	var added []schema.State
	released := map[schema.Hash]bool{}
	untouched := map[schema.Hash]bool{} // only released rows: not archived now
	penalised := map[schema.Hash]bool{} // deferred while failed (applyHash): archived once long unseen
	at := 0                             // where the next lookup in rows starts: results come in hash order
	for i := 0; i < len(results); {
		h := results[i].InfoHash
		j := i
		for j < len(results) && results[j].InfoHash == h {
			j++
		}
		var st *schema.State
		if results[i].Outcome == schema.OutcomeReleased {
			// Released rows only: the hash's row stays as it was (or
			// absent) and its tier unchanged below.
			st = lookup(rows, added, h, &at)
			untouched[h] = true
		} else {
			st = r.find(rows, &added, h, &at, &results[i].Result, &out)
		}
		if r.applyHash(st, results[i:j], &out, released) {
			penalised[h] = true
		}
		i = j
	}
	if len(added) > 0 {
		statecol.SortedRun(added)
		rows = statecol.MergeSorted(rows, added)
	}

	// Split in place: hot rows stay at the front, in order; cold ones
	// (already cold, or archived now) are moved aside.
	var cold, archivedNow []schema.State
	hot := rows[:0]
	for i := range rows {
		st := &rows[i]
		if a := r.archives(st, untouched[st.InfoHash], released[st.InfoHash], penalised[st.InfoHash]); a != keep {
			st.Tier = schema.TierCold
			out.archive(a)
			archivedNow = append(archivedNow, *st)
			continue
		}
		if st.Tier == schema.TierCold {
			cold = append(cold, *st)
			continue
		}
		if len(hot) < i {
			hot = append(hot, *st)
		} else {
			hot = hot[:i+1]
		}
	}
	files := slices.Clone(coldFiles)
	// Untouched cold files stay as they are; the new cold file holds the
	// hashes archived now, cold rows found in hot files (a dedup rewrite
	// mixes the tiers) and, if a result touched them, the old cold rows.
	cold = statecol.MergeSorted(cold, archivedNow)
	files, err = schedule.WriteTiers(files, hot, cold, func(name string, rows []schema.State) (dataset.FileInfo, error) {
		return r.writeStaged(dataset.TableState, key, name, rows)
	})
	if err != nil {
		return out, err
	}
	r.mu.Lock()
	tx := r.tx
	tx.SetPartition(dataset.TableState, key, files)
	if len(added) > 0 {
		tx.DropBloom(dataset.TableState, key) // new hashes: dedup re-checks the files
	}
	r.mu.Unlock()
	return out, nil
}

// applyHash folds rs, the results of one hash (sorted by attempt time,
// released rows last), into st, the hash's state row (nil only for a
// hash the state does not know whose results are all released rows). It
// counts what it did in out and notes in released a hash whose lease it
// ended. It reports whether it deferred the hash (peers_penalised) while
// the hash was failed: runner.archives may then archive it short of
// archive.min_attempts.
func (r *runner) applyHash(st *schema.State, rs []result, out *partOut, released map[schema.Hash]bool) (penalised bool) {
	h := rs[0].InfoHash
	var lease *schema.Lease
	// A lease past its grace is gone (Prune drops it at the commit):
	// a result does not find it, and an unleased one counts.
	if l, ok := r.leases.Get(h); ok && !leases.Expired(l, r.now) {
		lease = &l
	}
	// Released rows sort last (sortResults): an attempt under the same
	// lease has been applied by the time they come. A hash with released
	// rows only had no attempt: its avoid_peers stay unpruned.
	releasesOnly := rs[0].Outcome == schema.OutcomeReleased
	for k := range rs {
		res := &rs[k]
		if res.Outcome == schema.OutcomeReleased {
			v, release := applyResult(r.p, st, &res.Result, lease)
			out.verdicts[v]++
			if release {
				out.released = append(out.released, h)
				released[h] = true
				lease = nil
			}
			continue
		}
		before, pulledAt := st.MetadataStatus, st.Reactivated
		v, release := applyResult(r.p, st, &res.Result, lease)
		out.verdicts[v]++
		if (v == applied || v == deferred) && st.Reactivated != pulledAt {
			out.reactivated++
		}
		if v == deferred && before == schema.StatusFailed {
			penalised = true
		}
		if out.attempts == nil {
			out.attempts = map[string]int64{}
		}
		out.attempts[res.Outcome]++
		if (v == stored || v == lateStored) && before != schema.StatusFetched {
			adoptHashType(st, &res.Result)
			out.torrents = append(out.torrents, torrentOf(res))
		}
		if release && lease != nil {
			out.released = append(out.released, h)
			released[h] = true
			lease = nil
		}
	}
	if !releasesOnly {
		pruneAvoid(st, r.peers.rows, r.now)
	}
	return penalised
}

// find returns the state row of h, creating one for a hash the state
// does not know (a fetch of a hash list that bypassed dedup): a hash is
// never lost. It looks h up as lookup does (at: see there).
func (r *runner) find(rows []schema.State, added *[]schema.State, h schema.Hash, at *int, first *schema.Result, out *partOut) *schema.State {
	if st := lookup(rows, *added, h, at); st != nil {
		return st
	}
	out.unknown++
	typ := first.HashType
	if typ == 0 {
		typ = schema.HashV1
	}
	*added = append(*added, schema.State{InfoHash: h, HashType: typ, FirstSeen: first.AttemptedAt,
		LastSeen: first.AttemptedAt, LastSource: schema.SourceImport, FirstSource: schema.SourceImport,
		MetadataStatus: schema.StatusNew, Tier: schema.TierHot})
	return &(*added)[len(*added)-1]
}

// lookup returns the state row of h, in rows or added (both sorted by
// hash), or nil when the state does not know it (a released row creates
// no row: there was no attempt). Hashes are looked up in increasing
// order (a partition's results, sorted): the search in rows starts at
// *at, where the previous one ended, and gallops (a few compares a hash,
// where a binary search over every row took 17 at 78k rows: 1M results
// into a 20M-hash state spent ~0.9 s of CPU in them), and *at moves to
// h's place. added, the rows made for hashes the state lacks (sorted
// too: they are made in hash order), is searched by bisection.
func lookup(rows []schema.State, added []schema.State, h schema.Hash, at *int) *schema.State {
	i := gallop(rows, *at, h)
	*at = i
	if i < len(rows) && rows[i].InfoHash == h {
		return &rows[i]
	}
	if i, ok := slices.BinarySearchFunc(added, h, func(s schema.State, h schema.Hash) int { return hashCmp(s.InfoHash, h) }); ok {
		return &added[i]
	}
	return nil
}

// gallop returns the first index from at on of rows (sorted by hash)
// whose hash is not below h (len(rows) if none): it steps 1, 2, 4, ...
// rows until it passes h, then searches that last step.
func gallop(rows []schema.State, at int, h schema.Hash) int {
	lo, hi := at, at
	for step := 1; hi < len(rows) && hashCmp(rows[hi].InfoHash, h) < 0; step *= 2 {
		lo, hi = hi+1, hi+step
	}
	hi = min(hi, len(rows))
	// Every row from at to lo is below h; row hi (if any) is not.
	return lo + sort.Search(hi-lo, func(k int) bool { return hashCmp(rows[lo+k].InfoHash, h) >= 0 })
}

// coldFile is the info_hash column of a cold file of a partition, read
// once (readColdHashes) for touchesCold and the splice path.
type coldFile struct {
	hashes []schema.Hash // in the file's order
	sorted []schema.Hash // hashes, sorted (a copy if they were not)
}

// has reports whether h is among the file's hashes.
func (c *coldFile) has(h schema.Hash) bool {
	_, ok := slices.BinarySearchFunc(c.sorted, h, hashCmp)
	return ok
}

// readColdHashes reads the info_hash column of each of the cold files of
// partition key, in their order (statecol.ReadHashes, page by page).
func (r *runner) readColdHashes(key string, cold []dataset.FileInfo) ([]coldFile, error) {
	out := make([]coldFile, 0, len(cold))
	for _, f := range cold {
		hs, err := statecol.ReadHashes(r.d.DataFile(r.base, dataset.TableState, key, f), nil)
		if err != nil {
			return nil, fmt.Errorf("merge: state partition %s: %w", key, err)
		}
		c := coldFile{hashes: hs, sorted: hs}
		if !slices.IsSortedFunc(hs, hashCmp) { // a check: state files are sorted
			c.sorted = slices.Clone(hs)
			slices.SortFunc(c.sorted, hashCmp)
		}
		out = append(out, c)
	}
	return out, nil
}

// touchesCold reports whether any result that changes a state row (not
// a released one) is for a hash in the cold files.
func touchesCold(cold []coldFile, results []result) bool {
	for i := range cold {
		for j := range results {
			if results[j].Outcome != schema.OutcomeReleased && cold[i].has(results[j].InfoHash) {
				return true
			}
		}
	}
	return false
}

// writeStaged writes rows as file name of partition key of table in the
// transaction (snappy for state, zstd for torrents; the checksum is taken
// on the way out, not by reading the file back).
func writeStaged[T any](r *runner, table, key, name string, rows []T) (dataset.FileInfo, error) {
	r.mu.Lock()
	tx := r.tx
	r.mu.Unlock()
	fi, err := dataset.WriteStagedAs(tx, table, key, name, rows)
	if err != nil {
		return fi, fmt.Errorf("merge: %w", err)
	}
	return fi, nil
}

func (r *runner) writeStaged(table, key, name string, rows []schema.State) (dataset.FileInfo, error) {
	return writeStaged(r, table, key, name, rows)
}

// torrentOf is the stored metadata of an ok result (its Meta still in
// the spill if the result's is). fetched_at is when the attempt ended:
// attempted_at plus total_ms (fetch always sets it; a null one, from a
// results file written by something else, adds nothing).
func torrentOf(res *result) torrentRow {
	typ := res.HashType
	if typ == 0 {
		typ = schema.HashV1
	}
	took := int64(0)
	if res.TotalMs != nil {
		took = max(*res.TotalMs, 0)
	}
	return torrentRow{Torrent: schema.Torrent{InfoHash: res.InfoHash, HashType: typ, FetchedAt: res.AttemptedAt + took,
		ServedBy: res.ServedBy, MetadataSize: res.infoLen(), Meta: res.Meta()}, meta: res.meta}
}
