package statecol

import (
	"bytes"
	"slices"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// ReadRun decodes the state files dfs (a partition's, each sorted by
// info_hash) as one run sorted by info_hash: the first into buf's memory
// (see ReadStateFileInto: give it room for every row, and the merges
// never copy the run to a bigger array), each further one into
// *scratch's (reused from file to file, and kept for the caller's next
// call) and merged in (MergeSorted: linear, where sorting the
// concatenation moved wide rows n log n times). opened[i], when opened
// is not nil and it is not nil, is dfs[i] already open (its footer
// checked: the caller keeps it open); the others are opened here. A file
// out of order (not written by this package) is sorted first.
func ReadRun(dfs []rowio.DataFile, opened []*File, buf []schema.State, scratch *[]schema.State) ([]schema.State, error) {
	run := buf[:0]
	for i, df := range dfs {
		into := *scratch
		if i == 0 {
			into = run
		}
		var rows []schema.State
		var err error
		if i < len(opened) && opened[i] != nil {
			rows, err = opened[i].ReadAllInto(df.Path(), into)
		} else {
			rows, err = ReadStateFileInto(df, into)
		}
		if err != nil {
			return nil, err // it names the file
		}
		SortedRun(rows)
		if i == 0 {
			run = rows
			continue
		}
		*scratch = rows[:0]
		run = MergeSorted(run, rows)
	}
	return run, nil
}

// SortedRun sorts rows by info_hash in place unless they already are
// (one pass checks: a state file's rows are; moving wide rows around is
// not free) and returns them.
func SortedRun(rows []schema.State) []schema.State {
	byHash := func(a, b schema.State) int { return bytes.Compare(a.InfoHash[:], b.InfoHash[:]) }
	if !slices.IsSortedFunc(rows, byHash) {
		slices.SortFunc(rows, byHash)
	}
	return rows
}
