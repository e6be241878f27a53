package merge

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/infohash/infohash/formats/leases"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/textenc"
	"github.com/infohash/infohash/pipeline/schedule"
)

// foreignLease refuses a result of a job that plan-retries planned for
// another dataset than in's (its lease_id names it: leases.ID): its lease
// matches none here, so it would be ignored as late, while its hash was
// added and its peers penalised, and its own dataset would never see it.
// A lease_id of the older form, or none, names no dataset: taken as
// before (warnForeign may tell). Without in.dataset (a reader's test) none
// is judged. A job planned under one of in.ancestors, before the dataset
// was copied, is the dataset's own as much as the original's: one of a
// pass in.passes records of that ancestor, or any when it records none
// (a copy made before format 11). The ancestor's later passes are its
// own.
func foreignLease(in input, r *schema.Result) error {
	ds := leases.Dataset(r.LeaseID)
	if ds == "" || in.dataset == "" || ds == in.dataset {
		return nil
	}
	if !slices.Contains(in.ancestors, ds) {
		return fmt.Errorf("lease_id %s was planned by dataset %s, not this one (%s): results of another dataset's jobs", r.LeaseID, ds, in.dataset)
	}
	if passes, ok := in.passes[ds]; ok && !slices.Contains(passes, leases.Pass(r.LeaseID)) {
		return fmt.Errorf("lease_id %s was planned by dataset %s after this one (%s) was copied from it: "+
			"results of another dataset's jobs", r.LeaseID, ds, in.dataset)
	}
	return nil
}

// checkResult rejects rows merge cannot apply safely.
func checkResult(r *schema.Result) error {
	h := schema.Hex(r.InfoHash)
	if r.Outcome != schema.OutcomeOK && r.Outcome != schema.OutcomeReleased && schedule.KindOf(r.Outcome) == schedule.KindUnknown {
		return fmt.Errorf("%s: unknown outcome %q", h, r.Outcome)
	}
	if r.AttemptedAt <= 0 {
		return fmt.Errorf("%s: attempted_at is missing", h)
	}
	// The end of the penalty it waits for is the deferral's whole point:
	// without it (null, as results written before the column read) the
	// hash would be retried soon, to find the same peers penalised.
	if r.Outcome == schema.OutcomePeersPenalised && r.RetryAfter <= 0 {
		return fmt.Errorf("%s: %s without retry_after", h, r.Outcome)
	}
	// No penalty lasts longer than a policy duration can (~100 years);
	// one past int64 made next_retry wrap to ~292 million years BC.
	if r.Outcome == schema.OutcomePeersPenalised && r.RetryAfter-r.AttemptedAt > schedule.MaxDuration.Milliseconds() {
		return fmt.Errorf("%s: retry_after %d ms is more than %d days after attempted_at: no penalty lasts that long",
			h, r.RetryAfter, schedule.MaxDuration/schedule.Day)
	}
	// A full v2 hash starts with its 20-byte key, the info_hash: one that
	// does not names another hash, and the row contradicts itself.
	v2 := r.InfoHashV2
	if msg := textenc.V2BytesError("info_hash_v2", len(v2)); msg != "" {
		return fmt.Errorf("%s: %s", h, msg)
	} else if len(v2) == 32 && !bytes.Equal(v2[:20], r.InfoHash[:]) {
		return fmt.Errorf("%s: info_hash_v2 %x does not start with the row's info_hash", h, v2)
	}
	if r.Outcome == schema.OutcomeOK && !verified(r) {
		return fmt.Errorf("%s: outcome ok but info_bytes do not hash to the infohash", h)
	}
	for i, pf := range r.PeerFailures {
		// The endpoint becomes a row of peers/ and a line of every jobs
		// file's avoid list: it must be one.
		if !schema.PeerAddrOK(pf.Addr) {
			return fmt.Errorf("%s: peer_failures[%d]: %q is not a peer endpoint (host:port)", h, i, pf.Addr)
		}
		// Its class picks the endpoint's penalty (one no fetch writes
		// would be none) and its time starts it: without one (0, as
		// DuckDB reads a NULL) the penalty would have ended in 1970 and
		// be forgotten at once. Either way the endpoint would go
		// unpenalised, the failure's provenance lost unsaid.
		if k := schedule.KindOf(pf.Class); k == schedule.KindUnknown || k == schedule.KindDeferred {
			return fmt.Errorf("%s: peer_failures[%d]: unknown failure class %q", h, i, pf.Class)
		}
		if pf.At <= 0 {
			return fmt.Errorf("%s: peer_failures[%d]: at is missing", h, i)
		}
	}
	// served_by is stored in the torrents table, a STRING column.
	if r.Outcome == schema.OutcomeOK && !utf8.ValidString(r.ServedBy) {
		return fmt.Errorf("%s: served_by %q is not valid UTF-8", h, r.ServedBy)
	}
	return nil
}

// verified reports whether an ok result's info dictionary hashes to its
// infohash as its hash_type says: SHA-1 for v1, SHA-256 truncated to 20
// bytes for v2, and the full SHA-256 when info_hash_v2 is given (only a
// v2 result may give one).
func verified(r *schema.Result) bool {
	if len(r.InfoBytes) == 0 {
		return false
	}
	if r.HashType == schema.HashV2 {
		sum := sha256.Sum256(r.InfoBytes)
		return bytes.Equal(sum[:20], r.InfoHash[:]) && (len(r.InfoHashV2) == 0 || bytes.Equal(sum[:], r.InfoHashV2))
	}
	return sha1Sum(r.InfoBytes) == r.InfoHash && len(r.InfoHashV2) == 0
}
