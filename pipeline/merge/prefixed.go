package merge

import (
	"errors"
	"fmt"

	"github.com/infohash/infohash/formats/schema"
)

// prefixed holds the results read, grouped by the first byte of their
// hash (the state partition they apply to), each group in the order
// read and packed (internTable.pack: a few dozen bytes a failed result,
// where a struct took 248 and its strings more), and their peer failures
// in the order read (penalize takes them so).
type prefixed struct {
	groups   [256]group
	strs     internTable
	n        int64
	failures []schema.PeerFailure
	err      error // a row add could not hold
}

// group is the packed results of one partition, and how many.
type group struct {
	b []byte
	n int
}

// errUnspilled is prefixed's error for an ok result whose metadata is
// not in the spill: read without one, it cannot be held.
var errUnspilled = errors.New("merge: an ok result's metadata is not in the spill")

// add packs res into its group; an ok result must have its metadata in
// the spill (a packed result has no room for it).
func (p *prefixed) add(res *result) {
	if res.Outcome == schema.OutcomeOK && !res.meta.spilled() {
		p.err = errUnspilled
		return
	}
	g := &p.groups[res.InfoHash[0]]
	g.b = p.strs.pack(g.b, res)
	g.n++
	p.failures = append(p.failures, res.PeerFailures...)
	p.n++
}

// part is the results of one state partition.
type part struct {
	key  string
	g    group
	strs []string // the table its strings were packed with
}

// expand returns the results of pt, unpacked, in buf (reused).
func expand(pt part, buf *[]result) []result {
	*buf = (*buf)[:0]
	if cap(*buf) < pt.g.n {
		*buf = make([]result, 0, pt.g.n)
	}
	u := unpacker{strs: pt.strs, b: pt.g.b}
	for range pt.g.n {
		*buf = append(*buf, result{})
		u.next(&(*buf)[len(*buf)-1])
	}
	return *buf
}

// parts hands the groups over as parts in partition order, the empty
// ones left out, and forgets them: the caller drops each part once
// applied.
func (p *prefixed) parts() []part {
	var out []part
	for b := range p.groups {
		if p.groups[b].n > 0 {
			out = append(out, part{fmt.Sprintf("%02x", b), p.groups[b], p.strs.strs})
			p.groups[b] = group{}
		}
	}
	return out
}
