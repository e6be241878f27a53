package plan

import "github.com/infohash/infohash/formats/schema"

// lostCold are the hashes that the jobs files killed runs left
// unpublished (unpublished) held as cold jobs (lease reason cold). The
// killed run's commit moved the cold sweep on past the window it found
// them in, so with their leases dropped they would wait until the sweep
// came round again (256/plan.cold_partitions passes). The pass that drops
// those leases offers them as if their partitions were in its cold window:
// it reads the cold files of those partitions (at most the killed pass's
// window) for them alone, and they compete for the cold reserve with the
// hashes of its own window. What it offers depends only on the snapshot and
// the files it claimed, so the same inputs and --now plan the same jobs;
// the sweep's cursor moves as it would have.
type lostCold struct {
	hashes map[schema.Hash]struct{}
	parts  [256]bool // partitions holding one
}

// newLostCold returns the set of hs.
func newLostCold(hs []schema.Hash) lostCold {
	var l lostCold
	for _, h := range hs {
		if l.hashes == nil {
			l.hashes = make(map[schema.Hash]struct{}, len(hs))
		}
		l.hashes[h] = struct{}{}
		l.parts[h[0]] = true
	}
	return l
}

// in reports whether partition prefix holds a lost hash.
func (l *lostCold) in(prefix byte) bool { return l.parts[prefix] }

// has reports whether h is a lost hash.
func (l *lostCold) has(h schema.Hash) bool {
	if len(l.hashes) == 0 {
		return false
	}
	_, ok := l.hashes[h]
	return ok
}
