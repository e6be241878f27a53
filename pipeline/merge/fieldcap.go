package merge

import (
	"fmt"
	"strings"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// The other string columns of results have fixed bounds, checked as the
// metadata cap is (metacap.go): a Parquet page of the column from its
// header (rowio.Limits.MaxValueBytes), before it is read, then each
// row's value. Without them a detail or served_by could take up to
// rowio's 512 MiB page limit, and a row's whole value was read, copied
// and kept (detail goes nowhere, served_by into torrents). The bounds are
// far above what fetch writes.
const (
	// maxDetailBytes bounds detail: fetch writes a sentence (an error,
	// some counts, a peer's address; a hash mismatch's two hashes).
	maxDetailBytes = 64 << 10
	// maxLeaseIDBytes bounds lease_id: plan-retries writes "L" and 16
	// hex digits; a UUID (36) from another planner fits.
	maxLeaseIDBytes = 128
	// maxClassBytes bounds outcome and a peer failure's class: names
	// of fetch's classes, the longest 18 bytes.
	maxClassBytes = 64
	// maxHashBytes bounds info_hash (a BLOB's: 20 bytes, 32 for a v2
	// job's) and info_hash_v2 (32).
	maxHashBytes = 32
)

// fieldBound is the fixed bound of a value of the results column at the
// Parquet leaf path (its list's levels included), 0 for none: served_by
// and a peer failure's addr are peer endpoints (schema.PeerAddrOK's
// bound); the metadata columns have the cap's (resultLimits).
func fieldBound(path []string) int64 {
	leaf := path[len(path)-1]
	switch {
	case len(path) == 1:
		switch leaf {
		case "detail":
			return maxDetailBytes
		case "served_by":
			return schema.MaxPeerAddrBytes
		case "lease_id":
			return maxLeaseIDBytes
		case "outcome":
			return maxClassBytes
		case "info_hash", "info_hash_v2":
			return maxHashBytes
		}
	case len(path) == 4 && path[0] == "peer_failures" && leaf == "addr":
		return schema.MaxPeerAddrBytes
	case len(path) == 4 && path[0] == "peer_failures" && leaf == "class":
		return maxClassBytes
	}
	return 0
}

// fieldPageBound says, for a page of column (dotted) that rowio refused,
// the fixed bound it was over ("" when the column has none): results'
// (fieldBound) or, for merge --from, the other dataset's state and peers
// (fromBound). A list of strings is named by its column.
func fieldPageBound(column string, limit int64) string {
	path := strings.Split(column, ".")
	if fieldBound(path) == 0 && fromBound(path) == 0 {
		return ""
	}
	name := path[len(path)-1]
	if name == "element" {
		name = path[0]
	}
	return fmt.Sprintf("%d bytes a value (%s's bound)", limit, name)
}

// checkFields refuses row n of in (counted from 1) when its detail,
// served_by, lease_id, outcome or a peer failure's class is over its
// bound (checkResult checks info_hash_v2's length, and a peer failure's
// addr with schema.PeerAddrOK, which has the same bound).
func checkFields(in input, n int64, r *schema.Result) error {
	over := func(column string, size, bound int) error {
		return exitcode.BadInput(fmt.Errorf("merge: %s: row %d: %s: %s of %d bytes, over its bound of %d bytes",
			in.name, n, schema.Hex(r.InfoHash), column, size, bound))
	}
	switch {
	case len(r.Detail) > maxDetailBytes:
		return over("detail", len(r.Detail), maxDetailBytes)
	case len(r.ServedBy) > schema.MaxPeerAddrBytes:
		return over("served_by", len(r.ServedBy), schema.MaxPeerAddrBytes)
	case len(r.LeaseID) > maxLeaseIDBytes:
		return over("lease_id", len(r.LeaseID), maxLeaseIDBytes)
	case len(r.Outcome) > maxClassBytes:
		return over("outcome", len(r.Outcome), maxClassBytes)
	}
	for i := range r.PeerFailures {
		if pf := &r.PeerFailures[i]; len(pf.Class) > maxClassBytes {
			return over(fmt.Sprintf("peer_failures[%d].class", i), len(pf.Class), maxClassBytes)
		}
	}
	return nil
}
