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
// in the order read (penalize takes them so). With a spill, a group's
// bytes go to it once they fill spillChunk (kept: the last chunk's at
// most), and a worker reads a partition's back when it applies it: 1M
// results held 50 MB packed, 256 x 16 KiB at most now.
type prefixed struct {
	groups   [256]group
	strs     internTable
	spill    *metaSpill // where the groups' chunks go (nil: held in memory)
	n        int64
	failures []schema.PeerFailure
	err      error // a row add could not hold
}

// spillChunk is how many packed bytes of a group prefixed holds before
// it writes them to the spill.
var spillChunk = 16 << 10

// group is the packed results of one partition: those in the spill
// (chunks, in order) then those held (b), and how many in all.
type group struct {
	chunks []chunk
	b      []byte
	n      int
}

// chunk is n bytes at off of the spill.
type chunk struct {
	off int64
	n   int
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
	if p.err != nil {
		return // the run fails with it
	}
	g := &p.groups[res.InfoHash[0]]
	g.b = p.strs.pack(g.b, res)
	g.n++
	p.failures = append(p.failures, res.PeerFailures...)
	p.n++
	if p.spill != nil && len(g.b) >= spillChunk {
		off, err := p.spill.putBytes(g.b)
		if err != nil {
			p.err = fmt.Errorf("merge: spilling the results read: %w", err)
			return
		}
		g.chunks = append(g.chunks, chunk{off: off, n: len(g.b)})
		g.b = g.b[:0]
	}
}

// part is the results of one state partition.
type part struct {
	key  string
	g    group
	strs []string // the table its strings were packed with
}

// expand returns the results of pt, unpacked, in buf (reused); its
// chunks are read back from sp into packed (reused too). Chunks that do
// not read back as the results packed (a spill cut short or damaged) are
// an error naming the partition and the spill, and no result.
func expand(pt part, sp *metaSpill, buf *[]result, packed *[]byte) ([]result, error) {
	b := pt.g.b
	if len(pt.g.chunks) > 0 {
		n := len(pt.g.b)
		for _, c := range pt.g.chunks {
			n += c.n
		}
		if cap(*packed) < n {
			*packed = make([]byte, n)
		}
		b = (*packed)[:n]
		at := 0
		for _, c := range pt.g.chunks {
			if err := sp.readBytes(b[at:at+c.n], c.off); err != nil {
				return nil, fmt.Errorf("merge: state partition %s: %s: %w", pt.key, sp.path(), err)
			}
			at += c.n
		}
		copy(b[at:], pt.g.b)
	}
	*buf = (*buf)[:0]
	if cap(*buf) < pt.g.n {
		*buf = make([]result, 0, pt.g.n)
	}
	u := unpacker{strs: pt.strs, b: b}
	for range pt.g.n {
		*buf = append(*buf, result{})
		if u.next(&(*buf)[len(*buf)-1]); u.err != nil {
			break
		}
	}
	if u.err == nil && len(u.b) > 0 {
		u.fail(fmt.Sprintf("%d bytes past the last of %d results", len(u.b), pt.g.n))
	}
	if u.err != nil {
		where := "held in memory"
		if len(pt.g.chunks) > 0 {
			where = sp.path()
		}
		*buf = (*buf)[:0]
		return nil, fmt.Errorf("merge: state partition %s: %s: %w", pt.key, where, u.err)
	}
	return *buf, nil
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
