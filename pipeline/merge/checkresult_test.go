package merge

import (
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/leases"
	"github.com/infohash/infohash/formats/schema"
)

// TestForeignLease: merge takes the results of its dataset's jobs and of
// its ancestors' (jobs planned before it was copied), and of lease IDs
// that name no dataset; it refuses another dataset's, naming both ids.
func TestForeignLease(t *testing.T) {
	const own, ancestor, older, other = "00000000000000a3", "00000000000000a2", "00000000000000a1", "00000000000000b1"
	in := input{dataset: own, ancestors: []string{ancestor, older}}
	for _, c := range []struct {
		name, leaseID string
		refused       bool
	}{
		{"own", leases.ID("0123456789abcdef", own), false},
		{"ancestor", leases.ID("0123456789abcdef", ancestor), false},
		{"older ancestor", leases.ID("0123456789abcdef", older), false},
		{"another dataset", leases.ID("0123456789abcdef", other), true},
		{"older form", leases.ID("0123456789abcdef", ""), false},
		{"none", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := foreignLease(in, &schema.Result{LeaseID: c.leaseID})
			if refused := err != nil; refused != c.refused {
				t.Fatalf("lease_id %q into dataset %s (ancestors %v): %v, want refused %v", c.leaseID, own, in.ancestors, err, c.refused)
			}
			if err != nil && (!strings.Contains(err.Error(), other) || !strings.Contains(err.Error(), own)) {
				t.Fatalf("refusal does not name both datasets: %v", err)
			}
		})
	}
}
