package plan

import (
	"context"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestPolicySetReachesRunningPlan: a "policy set" between a plan's Begin
// and its commit makes the commit a conflict; the plan made again runs
// under the new policy (its lease) and records it.
func TestPolicySetReachesRunningPlan(t *testing.T) {
	dir := tenNew(t)
	oldP, newP := schedule.Default(), schedule.Default()
	oldP.Plan.Lease = schedule.Duration(time.Hour)
	newP.Plan.Lease = schedule.Duration(3 * time.Hour)
	if err := schedule.Save(dir, oldP); err != nil {
		t.Fatal(err)
	}
	o := planOptions(t, dir)
	tries := 0
	o.OpenOutput = func(path string) (*fsutil.File, error) {
		if tries++; tries == 1 {
			l, err := dataset.LockWriter(context.Background(), dir, 0)
			if err != nil {
				return nil, err
			}
			err = schedule.Save(dir, newP)
			l.Release()
			if err != nil {
				return nil, err
			}
		}
		return fsutil.CreateOutput(path)
	}
	st, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if st.CommitConflicts != 1 || tries != 2 || st.PolicyHash != newP.Hash() {
		t.Errorf("%d conflicts in %d tries, policy %s; want 1 in 2, %s", st.CommitConflicts, tries, st.PolicyHash, newP.Hash())
	}
	leases, snap := leasesAt(t, dir)
	if len(leases) != 10 {
		t.Fatalf("%d leases, want 10", len(leases))
	}
	for h, l := range leases {
		if l.LeaseUntil != ms(t0)+3*hour {
			t.Fatalf("%x leased until %d, want %d (the new policy's 3h lease)", h, l.LeaseUntil, ms(t0)+3*hour)
		}
	}
	d, err := dataset.OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := d.Current()
	if err != nil {
		t.Fatal(err)
	}
	rec, err := schedule.Parse(m.Policy, "the manifest")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Hash() != newP.Hash() {
		t.Fatalf("snapshot %d records a policy with lease %v, want the one set meanwhile (%v)", snap, rec.Plan.Lease, newP.Plan.Lease)
	}
}
