package merge

import (
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/leases"
	"github.com/infohash/infohash/formats/schema"
)

// TestForeignLease: merge takes the results of its dataset's jobs and of
// its ancestors' jobs planned before it was copied (a pass recorded of
// that ancestor; any when none is, as by a copy made before format 11),
// and of lease IDs that name no dataset; it refuses another dataset's,
// and an ancestor's planned after the copy, naming both ids.
func TestForeignLease(t *testing.T) {
	const own, ancestor, older, other = "00000000000000a3", "00000000000000a2", "00000000000000a1", "00000000000000b1"
	const before, after = "0123456789abcdef", "0123456789abcde0" // passes of ancestor's, before and after the copy
	in := input{dataset: own, ancestors: []string{ancestor, older}, passes: map[string][]string{ancestor: {"0000000000000001", before}}}
	for _, c := range []struct {
		name, leaseID string
		refused       string // the other dataset the refusal names ("": taken)
	}{
		{"own", leases.ID(before, own), ""},
		{"ancestor, before the copy", leases.ID(before, ancestor), ""},
		{"ancestor, after the copy", leases.ID(after, ancestor), ancestor},
		{"older ancestor, no passes recorded", leases.ID(after, older), ""},
		{"another dataset", leases.ID(before, other), other},
		{"older form", leases.ID(before, ""), ""},
		{"none", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := foreignLease(in, &schema.Result{LeaseID: c.leaseID})
			if refused := err != nil; refused != (c.refused != "") {
				t.Fatalf("lease_id %q into dataset %s (ancestors %v, passes %v): %v, want refused %v", c.leaseID, own,
					in.ancestors, in.passes, err, c.refused != "")
			}
			if err != nil && (!strings.Contains(err.Error(), c.refused) || !strings.Contains(err.Error(), own) ||
				!strings.Contains(err.Error(), "results of another dataset's jobs")) {
				t.Fatalf("refusal does not name both datasets: %v", err)
			}
		})
	}
}
