package merge

import (
	"fmt"

	"github.com/infohash/infohash/formats/leases"
)

// housekeep is what a merge with nothing to apply (its inputs were all
// applied before, or hold no result row: errNoResults) still does: it
// prunes what apply prunes at every merge with rows, the
// leases that ended over leases.Grace ago and the peer penalties past the
// policy's forget time, and stages the tables that changed. It reports
// whether anything was pruned: if not, the run stays a no-op (no
// snapshot); if so, it commits that alone, and records its inputs in no
// ledger (applied again, they still change nothing).
func (r *runner) housekeep() (st Stats, pruned bool, err error) {
	if r.peers, err = readPeers(r.d, r.base); err != nil {
		return st, false, err
	}
	st.PeersForgotten = r.peers.prune(r.p, r.now)
	if r.leases, err = leases.ReadSorted(r.d, r.base); err != nil {
		return st, false, fmt.Errorf("merge: %w", err)
	}
	st.LeasesPruned = r.leases.Expired(r.now)
	st.PeerRows = len(r.peers.rows)
	if st.PeersForgotten+st.LeasesPruned == 0 {
		return st, false, nil
	}
	if st.LeasesPruned > 0 {
		if err := r.leases.Write(r.tx, nil, r.now); err != nil {
			return st, false, fmt.Errorf("merge: %w", err)
		}
	}
	if err := r.peers.stage(r.tx); err != nil {
		return st, false, err
	}
	return st, true, nil
}
