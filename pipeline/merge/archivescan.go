// The archive scan of the splice path: which rows of a hot file no
// result touches merge archives now, and how many tier=cold rows the
// file will hold.

package merge

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/statecol"
)

// archiveScan finds, of every row of hf, what schedule.ShouldArchive
// reads (tier, metadata_status, attempts, last_seen, lease_id,
// lease_until), adds to hf.changes the rows no result touches that merge
// archives now (runner.archives), and returns how many tier=cold rows hf
// will hold at most: those that are, those archived now, and hits, the
// hot rows that results which count touch (archived or not once
// applied). It stops, its counts past limit and hf.changes as they were,
// as soon as cold+hits is past limit: the splice is off then.
//
// It reads no more of a row group than it must: the tier of every row
// (for the counts); then, unless the statistics of last_seen and
// attempts say no row can cross the archive thresholds
// (ArchiveRule.MayCross), metadata_status; attempts and last_seen only
// when a row is new, failed or fetched; and the leases only when a row
// crosses the thresholds (ArchiveRule.Crossed), for runner.archives to
// decide. The 20M-hash state's merge of 10k results read and tested the
// six columns of every row as strings and numbers, a quarter of its CPU.
func (r *runner) archiveScan(hf *hotFile, results []result, sb *scanBuf, limit int64) (cold, hits int64, err error) {
	var add []change
	defer func() {
		// Back to the pool holding no string: a plain page's values
		// would stay reachable.
		clear(sb.lease)
		sb.lease = sb.lease[:0]
	}()
	rule := r.p.Archive
	// Crossed's thresholds by status code (none for codeOther): a row
	// outside them is not tested further.
	var minAttempts [len(statusNames)]int32
	var latestSeen [len(statusNames)]int64
	for k, name := range statusNames {
		minAttempts[k], latestSeen[k] = math.MaxInt32, math.MinInt64
		if a, s, ok := rule.Cutoffs(name, r.now); ok && name != "" {
			minAttempts[k], latestSeen[k] = a, s
		}
	}
	c := 0 // the first of hf.changes in the row group
	var first int64
	for _, rg := range hf.src.RowGroups() {
		n := int(rg.NumRows())
		sb.tier = resize(sb.tier, n)
		tier := sb.tier
		if err := scanCodes(hf, rg, "tier", tier, tierCode); err != nil {
			return 0, 0, err
		}
		for _, t := range tier {
			cold += int64(t) // codeCold is 1, codeOther 0: stays cold unless an ok result makes it hot
		}
		// Rows with results: the splice decides once they are applied.
		for ; c < len(hf.changes) && hf.changes[c].row < first+int64(n); c++ {
			if ch := hf.changes[c]; tier[ch.row-first] != codeCold && results[ch.lo].Outcome != schema.OutcomeReleased {
				hits++
			}
		}
		if cold+hits > limit {
			return cold, hits, nil
		}
		var status []uint8 // nil: no row of the group crosses the thresholds
		if r.mayArchive(hf, rg) {
			sb.status = resize(sb.status, n)
			status = sb.status
			if err := scanCodes(hf, rg, "metadata_status", status, statusCode); err != nil {
				return 0, 0, err
			}
			if !slices.ContainsFunc(status, func(s uint8) bool { return s != codeOther }) {
				status = nil // none new, failed nor fetched
			}
		}
		var attempts []int32
		var seen []int64
		if status != nil {
			sb.attempts, sb.seen = resize(sb.attempts, n), resize(sb.seen, n)
			attempts, seen = sb.attempts, sb.seen
			if err := scanNumbers(hf, rg, "attempts", attempts, statecol.Int32s); err != nil {
				return 0, 0, err
			}
			if err := scanNumbers(hf, rg, "last_seen", seen, statecol.Int64s); err != nil {
				return 0, 0, err
			}
		}
		read, leased := false, false // the leases of the row group; any row holds one
		for i, s := range status {
			if attempts[i] < minAttempts[s] || seen[i] > latestSeen[s] || tier[i] == codeCold ||
				!rule.Crossed(statusNames[s], attempts[i], seen[i], r.now) {
				continue
			}
			row := first + int64(i)
			if _, touched := slices.BinarySearchFunc(hf.changes, row, func(ch change, row int64) int { return cmp.Compare(ch.row, row) }); touched {
				continue
			}
			if !read {
				if leased, err = scanLeases(hf, rg, n, sb); err != nil {
					return 0, 0, err
				}
				read = true
			}
			// The row as far as the rule reads it (its tier is not cold).
			st := schema.State{InfoHash: hf.hashes[row], Tier: schema.TierHot, MetadataStatus: statusNames[s],
				Attempts: attempts[i], LastSeen: seen[i]}
			if leased {
				st.LeaseID, st.LeaseUntil = sb.lease[i], sb.until[i]
			}
			if r.archives(&st, false, false, false) != keep {
				add = append(add, change{row: row})
				if cold++; cold+hits > limit {
					return cold, hits, nil
				}
			}
		}
		first += int64(n)
	}
	if len(add) > 0 {
		hf.changes = append(hf.changes, add...)
		slices.SortFunc(hf.changes, func(a, b change) int { return cmp.Compare(a.row, b.row) })
	}
	return cold, hits, nil
}

// The codes archiveScan reads tier and metadata_status as: a tier cold
// (1) or not (0); a status failed, fetched, new or another.
const (
	codeOther uint8 = iota
	codeCold
	codeFailed
	codeFetched
	codeNew
)

// statusNames are the statuses of the status codes ("" for codeOther and
// codeCold, a tier code).
var statusNames = [...]string{codeFailed: schema.StatusFailed, codeFetched: schema.StatusFetched, codeNew: schema.StatusNew}

func tierCode(s string) uint8 {
	if s == schema.TierCold {
		return codeCold
	}
	return codeOther
}

func statusCode(s string) uint8 {
	switch s {
	case schema.StatusFailed:
		return codeFailed
	case schema.StatusFetched:
		return codeFetched
	case schema.StatusNew:
		return codeNew
	}
	return codeOther
}

// mayArchive reports whether a row of row group rg of hf may cross the
// archive thresholds, by the statistics of its last_seen and attempts:
// true when they are not recorded (a file of another writer) or bound
// nothing.
func (r *runner) mayArchive(hf *hotFile, rg parquet.RowGroup) bool {
	chunk, _ := hf.src.Column(rg, "last_seen")
	if chunk == nil {
		return true // the format predates it: every row reads 0
	}
	seenLo, _, ok := statecol.Int64Bounds(chunk, rg.NumRows())
	if !ok {
		return true
	}
	attemptsHi := int64(math.MaxInt32)
	if chunk, _ := hf.src.Column(rg, "attempts"); chunk == nil {
		attemptsHi = 0 // the format predates it: every row reads 0
	} else if _, hi, ok := statecol.Int64Bounds(chunk, rg.NumRows()); ok {
		attemptsHi = hi
	}
	return r.p.Archive.MayCross(seenLo, int32(attemptsHi), r.now)
}

// scanCodes reads string column name of row group rg of hf into dst as
// codes (statecol.Codes): code("") for every row when the file lacks the
// column (its dataset's format predates it) or it is all null.
func scanCodes(hf *hotFile, rg parquet.RowGroup, name string, dst []uint8, code func(string) uint8) error {
	chunk, _ := hf.src.Column(rg, name)
	if chunk == nil || statecol.AllNull(chunk, int64(len(dst))) {
		null := code("")
		for i := range dst {
			dst[i] = null
		}
		return nil
	}
	if err := statecol.Codes(chunk, dst, code); err != nil {
		return fmt.Errorf("%s: %s: %w", hf.path, name, err)
	}
	return nil
}

// scanNumbers reads numeric column name of row group rg of hf into dst
// (read: statecol.Int32s or Int64s): zeros when the file lacks it or it
// is all null.
func scanNumbers[T int32 | int64](hf *hotFile, rg parquet.RowGroup, name string, dst []T, read func(parquet.ColumnChunk, []T) error) error {
	chunk, _ := hf.src.Column(rg, name)
	if chunk == nil || statecol.AllNull(chunk, int64(len(dst))) {
		clear(dst)
		return nil
	}
	if err := read(chunk, dst); err != nil {
		return fmt.Errorf("%s: %s: %w", hf.path, name, err)
	}
	return nil
}

// scanLeases reads lease_id and lease_until of row group rg of hf (n
// rows) into sb.lease and sb.until, and reports whether any row holds
// either: none does when the file lacks them or both are all null
// (leases/ holds the leases now), and neither is read nor cleared then.
func scanLeases(hf *hotFile, rg parquet.RowGroup, n int, sb *scanBuf) (bool, error) {
	idChunk, _ := hf.src.Column(rg, "lease_id")
	untilChunk, _ := hf.src.Column(rg, "lease_until")
	none := func(c parquet.ColumnChunk) bool { return c == nil || statecol.AllNull(c, int64(n)) }
	if none(idChunk) && none(untilChunk) {
		return false, nil
	}
	sb.lease, sb.until = resize(sb.lease, n), resize(sb.until, n)
	lease := sb.lease
	if none(idChunk) {
		clear(lease)
	} else if err := statecol.String(idChunk, n, func(i int, s string) { lease[i] = s }); err != nil {
		return false, fmt.Errorf("%s: lease_id: %w", hf.path, err)
	}
	return true, scanNumbers(hf, rg, "lease_until", sb.until, statecol.Int64s)
}

// scanBuf holds the buffers of a splice's scan: the hashes of a
// partition's hot files, and the columns archiveScan reads of a row group.
type scanBuf struct {
	hashes       []schema.Hash
	tier, status []uint8
	lease        []string
	attempts     []int32
	seen, until  []int64
}

var scanBufs = sync.Pool{New: func() any { return new(scanBuf) }}
