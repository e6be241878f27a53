package dedup

import (
	"context"
	"errors"

	"github.com/infohash/infohash/formats/dataset"
)

// earlyStop lets readWhileChecksumming stop reading once it knows the
// bet is lost; tests turn it off to take the path where the reading ends
// first.
var earlyStop = true

// readWhileChecksumming is the first aggregation of a run: it reads every
// input while their checksums are computed, betting that none was applied
// before nor is named twice (the usual case), so that checksumming costs
// no time of its own. It returns the ids it aggregated, as idsOf would
// ("" if it stopped early): as soon as the checksums show an input to
// skip, it stops reading, and Run aggregates the pending inputs afresh. A
// re-run on applied input so costs only the checksums, as before.
//
// The inputs whose ids the input cache gave are known before any is
// read: those already applied (or repeated) are left out of the bet, and
// are not read at all.
func (r *runner) readWhileChecksumming(ctx context.Context, base *dataset.Manifest, ins []input, sums *checksums, rows map[string]int64) (string, error) {
	idx := worthReading(r.d, base, ins)
	if len(idx) == 0 { // all applied: nothing to read
		_, err := sums.wait() // (none: every id came from the cache)
		return "", err
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := earlyStop
	go func() {
		if ids, err := sums.wait(); stop {
			// Pending drops whatever worthReading left out, and perhaps
			// more: the bet holds if it drops nothing else.
			if err != nil {
				cancel()
			} else if p, err := pendingInputs(r.d, base, withIDs(ins, ids)); err != nil || len(p) != len(idx) {
				cancel()
			}
		}
	}()
	n, err := r.aggregate(rctx, pick(ins, idx), "dedup: inputs aggregated alongside checksumming")
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return "", err // bad input is bad whether or not it was applied
	}
	ids, serr := sums.wait()
	if serr != nil {
		return "", serr
	}
	if err != nil {
		return "", nil // stopped early: the bet was lost
	}
	// If it was lost all the same, Run sees that the ids differ from the
	// pending inputs' and aggregates those.
	withID := pick(withIDs(ins, ids), idx)[:len(n)]
	for i, in := range withID {
		rows[in.id] = n[i]
	}
	return idsOf(withID), nil
}

// worthReading returns the indexes of the inputs of ins worth reading:
// all but those whose id is known already (from the input cache) and
// which snapshot base's ledger holds (nil: the current snapshot's), or
// which repeat an earlier input's known id. If the ledger cannot be read,
// all are: the run then meets the error where it checks the ledger.
func worthReading(d *dataset.Dataset, base *dataset.Manifest, ins []input) []int {
	var known []string
	for _, in := range ins {
		if in.id != "" {
			known = append(known, in.id)
		}
	}
	var applied map[string]bool
	if len(known) > 0 {
		var err error
		if base == nil {
			base, err = d.Current()
		}
		if err == nil {
			applied, err = d.AppliedAmong(base, known)
		}
		if err != nil {
			applied, known = nil, nil
		}
	}
	seen := map[string]bool{}
	idx := make([]int, 0, len(ins))
	for i, in := range ins {
		if in.id != "" && len(known) > 0 {
			if applied[in.id] || seen[in.id] {
				continue
			}
			seen[in.id] = true
		}
		idx = append(idx, i)
	}
	return idx
}

// notApplied is ins without the inputs that worthReading leaves out.
func notApplied(d *dataset.Dataset, base *dataset.Manifest, ins []input) []input {
	return pick(ins, worthReading(d, base, ins))
}

// pick returns the inputs of ins at indexes idx.
func pick(ins []input, idx []int) []input {
	out := make([]input, len(idx))
	for k, i := range idx {
		out[k] = ins[i]
	}
	return out
}
