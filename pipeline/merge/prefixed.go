package merge

import (
	"fmt"

	"github.com/infohash/infohash/formats/schema"
)

// prefixed holds the results read, grouped by the first byte of their
// hash (the state partition they apply to), each group in the order
// read, and their peer failures in the order read (penalize takes them
// so). 256 slices grow by small copies: one slice of every result (368
// bytes each) held its old and its grown array at once, up to 2.25 times
// the rows read, the peak of a merge of 1M results.
type prefixed struct {
	groups   [256][]result
	n        int64
	failures []schema.PeerFailure
}

// add appends a copy of res.
func (p *prefixed) add(res *result) {
	p.groups[res.InfoHash[0]] = append(p.groups[res.InfoHash[0]], *res)
	p.failures = append(p.failures, res.PeerFailures...)
	p.n++
}

// part is the results of one state partition.
type part struct {
	key string
	rs  []result
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
