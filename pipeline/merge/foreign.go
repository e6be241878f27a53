package merge

import (
	"fmt"
	"log/slog"
	"slices"

	"github.com/infohash/infohash/formats/leases"
)

// maxNotedLeases bounds the lease ids noted per input: fetch's results of
// one jobs file carry one (a plan-retries run leases all its jobs under
// one id), a folder's files one each. Results under further ids are not
// judged (neither known nor unknown).
const maxNotedLeases = 256

// leaseNote counts an input's results by lease_id, to tell results that
// another dataset planned with lease IDs that name none (a plan-retries
// older than dataset ids; foreignLease refuses those naming another
// dataset): merge recognises such a result's lease by the
// lease table (the hash's lease, DIR/leases/), and a plan-retries run of
// this dataset that leased a job left its lease_id there until merge
// ended it or 7 days past its end (leases.Grace). Results under ids that
// no lease of the dataset holds change nothing but what late results
// change (an ok is stored, a hash the state lacks is added with
// seen_count 0, and their peer failures penalise endpoints), which a
// results file of another dataset's leases (rT.parquet of a second
// crawler) did with only late_failures_ignored to hint at it.
type leaseNote struct {
	ids     map[string]int64 // results per lease_id ("" not noted: no lease, a manual fetch)
	unnoted int64            // results under an id past maxNotedLeases
	unknown int64            // of the noted, those under an id no lease holds (judge)
	judged  bool
}

// add notes a result under lease id. An id that names its dataset
// (leases.Dataset) is not noted: foreignLease has refused the input if
// that is another dataset (but an ancestor), so it is this one's, issued
// here even when no lease holds it any more (the lease ran out and its
// hash was planned again: a crashed fetch's results merged late).
func (n *leaseNote) add(id string) {
	switch _, ok := n.ids[id]; {
	case id == "", leases.Dataset(id) != "":
	case ok || len(n.ids) < maxNotedLeases:
		if n.ids == nil {
			n.ids = map[string]int64{}
		}
		n.ids[id]++
	default:
		n.unnoted++
	}
}

// judge counts the noted results whose lease_id no lease of s holds.
func (n *leaseNote) judge(s leases.Sorted) {
	ids := make([]string, 0, len(n.ids))
	for id := range n.ids {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	n.unknown, n.judged = 0, true
	for k, held := range s.HoldsIDs(ids) {
		if !held {
			n.unknown += n.ids[ids[k]]
		}
	}
}

// judgeLeases judges the lease note of every input of notes by s.
func judgeLeases(notes map[string]inputNote, s leases.Sorted) {
	for id, note := range notes {
		note.leases.judge(s)
		notes[id] = note
	}
}

// warnForeign warns, once for input name of rows results, when most of
// them carry a lease this dataset never issued: what merge applied of it
// (late results) is committed as any late result is; the warning says
// what the counters alone did not.
func warnForeign(name string, rows int64, n leaseNote) {
	if !n.judged || n.unknown == 0 || 2*n.unknown <= rows {
		return
	}
	slog.Warn(fmt.Sprintf("merge: %s: %d of %d results carry leases this dataset never issued (results of another dataset?)", name, n.unknown, rows),
		"input", name, "unknown_lease_results", n.unknown, "results", rows, "lease_ids", len(n.ids))
}
