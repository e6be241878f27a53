// Transcoding of the list columns (avoid_peers, peers): a changed chunk
// laid out again from its old pages, the changed rows' lists put in.

package statecol

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/schema"
)

// listMask is the set of list<string> columns transcodeList lays out.
const listMask Columns = 1<<cAvoidPeers | 1<<cPeers

// transcodeLists lays out the list columns of rest from their old pages
// (transcodeList) and returns rest without those it laid out; a column
// with a page transcodeList does not take is left, reset, to the rows
// path.
func (sw *stateWriter) transcodeLists(f *File, rg parquet.RowGroup, rest Columns, n int, sel []int32, st []schema.State) (Columns, error) {
	for _, k := range []int{cAvoidPeers, cPeers} {
		if rest&(1<<k) == 0 {
			continue
		}
		switch err := sw.transcodeList(f, rg, k, n, sel, st); {
		case err == nil:
			rest &^= 1 << k
		case errors.Is(err, errSlowPage):
			c := &sw.cols[k]
			c.reset(n)
			c.entries = 0 // as fillBegin leaves a list column
		default:
			return rest, err
		}
	}
	return rest, nil
}

// transcodeList lays out list column k (avoid_peers or peers) of row
// group rg (n rows) in sw.cols[k], as fillBegin left it: every row's old
// levels and values copied as they are, except rows sel[i] (sorted),
// which take st[i]'s list. The result is what strList lays out from the
// whole row group's rows with the changes made, without decoding a row
// into a State or an element into a string.
//
// It takes only pages laid out as strList lays them out (PLAIN, levels 0
// and 1, an empty list a single null entry, each page starting a row):
// for any other it returns errSlowPage, the column half laid out, for
// the caller to reset and lay out from rows.
func (sw *stateWriter) transcodeList(f *File, rg parquet.RowGroup, k, n int, sel []int32, st []schema.State) error {
	c := &sw.cols[k]
	name := stateColumnNames[k]
	cc, maxDef := f.Column(rg, name, "list", "element")
	switch {
	case cc == nil:
		return fmt.Errorf("statecol: no column %s", name)
	case maxDef != 1:
		return errSlowPage
	}
	list := func(i int) []string {
		if k == cAvoidPeers {
			return st[i].AvoidPeers
		}
		return st[i].Peers
	}
	row, next := 0, 0 // rows before the page; sel's next entry
	err := EachPage(cc, func(p parquet.Page) error {
		if p.Dictionary() != nil {
			return errSlowPage
		}
		reps, defs := p.RepetitionLevels(), p.DefinitionLevels()
		buf, offs := values(p).ByteArray()
		nvals := max(len(offs)-1, 0)
		if len(reps) != len(defs) || (len(reps) > 0 && reps[0] != 0) {
			return errSlowPage
		}
		// The old entries [from, i) and their values [vfrom, v) are
		// copied as a run when a changed row or the page's end comes.
		from, vfrom, v := 0, 0, 0
		flush := func(i int) {
			c.rep = append(c.rep, reps[from:i]...)
			c.def = append(c.def, defs[from:i]...)
			c.entries += i - from
			c.nulls += int64((i - from) - (v - vfrom))
			for x := vfrom; x < v; x++ {
				s := buf[offs[x]:offs[x+1]]
				c.vals = binary.LittleEndian.AppendUint32(c.vals, uint32(len(s)))
				c.vals = append(c.vals, s...)
			}
		}
		for i := 0; i < len(defs); row++ {
			// Entry i starts a row (repetition level 0): an empty list
			// is one entry of level 0, a list of m strings m entries of
			// level 1, each repeating the one before but the first.
			e, m := i+1, 0
			switch defs[i] {
			case 0:
			case 1:
				for m = 1; e < len(defs) && reps[e] == 1 && defs[e] == 1; e++ {
					m++
				}
			default:
				return errSlowPage
			}
			if (e < len(defs) && reps[e] != 0) || row >= n || v+m > nvals {
				return errSlowPage
			}
			if next < len(sel) && int(sel[next]) == row {
				flush(i)
				c.strList(list(next))
				next++
				from, vfrom = e, v+m
			}
			v += m
			i = e
		}
		if v != nvals {
			return errSlowPage
		}
		flush(len(defs))
		return nil
	})
	if err := complete(err, row, n); err != nil {
		if errors.Is(err, errSlowPage) {
			return err
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
