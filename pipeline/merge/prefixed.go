package merge

import (
	"errors"
	"fmt"

	"github.com/infohash/infohash/formats/schema"
)

// prefixed holds the results read, grouped by the first byte of their
// hash (the state partition they apply to), each group in the order
// read, and their peer failures in the order read (penalize takes them
// so). 256 slices grow by small copies: one slice of every result (368
// bytes each) held its old and its grown array at once, up to 2.25 times
// the rows read, the peak of a merge of 1M results. The rows are kept
// without their metadata columns (held: 248 bytes).
type prefixed struct {
	groups   [256][]held
	n        int64
	failures []schema.PeerFailure
	err      error // a row add could not hold
}

// errUnspilled is prefixed's error for an ok result whose metadata is
// not in the spill: read without one, it cannot be held.
var errUnspilled = errors.New("merge: an ok result's metadata is not in the spill")

// add appends a copy of res.
func (p *prefixed) add(res *result) {
	h, ok := hold(res)
	if !ok {
		p.err = errUnspilled
		return
	}
	p.groups[res.InfoHash[0]] = append(p.groups[res.InfoHash[0]], h)
	p.failures = append(p.failures, res.PeerFailures...)
	p.n++
}

// part is the results of one state partition.
type part struct {
	key string
	rs  []held
}

// expand returns the results of hs in buf, reused.
func expand(hs []held, buf *[]result) []result {
	*buf = (*buf)[:0]
	for i := range hs {
		*buf = append(*buf, hs[i].result())
	}
	return *buf
}

// parts hands the groups over as parts in partition order, the empty
// ones left out, and forgets them: the caller drops each part once
// applied.
func (p *prefixed) parts() []part {
	var out []part
	for b := range p.groups {
		if len(p.groups[b]) > 0 {
			out = append(out, part{fmt.Sprintf("%02x", b), p.groups[b]})
			p.groups[b] = nil
		}
	}
	return out
}
