package dedup

import (
	"context"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestPolicySetReachesRunningDedup: a "policy set" between a dedup's
// Begin and its commit makes the commit a conflict; the try re-applied
// runs under the new policy (the activity's half-life: its batch is read
// again) and records it, not the policy the run started with.
func TestPolicySetReachesRunningDedup(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	if err := dataset.MakeDir(data); err != nil {
		t.Fatal(err)
	}
	oldP, newP := schedule.Default(), schedule.Default()
	oldP.Plan.ActivityHalfLife = schedule.Duration(24 * time.Hour)
	newP.Plan.ActivityHalfLife = schedule.Duration(time.Hour)
	if err := schedule.Save(data, oldP); err != nil {
		t.Fatal(err)
	}
	h := schema.Hash{0x42, 1}
	at := t0.UnixMilli()
	in := writeObs(t, dir, []schema.Observation{
		{InfoHash: h, HashType: schema.HashV1, ObservedAt: at, Source: schema.SourceGetPeers, RunID: "t"},
		{InfoHash: h, HashType: schema.HashV1, ObservedAt: at + time.Hour.Milliseconds(), Source: schema.SourceGetPeers, RunID: "t"},
	})
	tries := 0
	st, err := run(t, data, func(o *Options) {
		o.BindPolicy = func(o *Options, tx *dataset.Tx) error { // as app's bindPolicy does
			p, err := schedule.Of(tx)
			if err != nil {
				return err
			}
			o.Reactivate = func(st *schema.State, at, announcedAt int64) bool { return schedule.Reactivate(p, st, at, announcedAt) }
			o.Policy = p.JSON()
			o.HalfLife = time.Duration(p.Plan.ActivityHalfLife)
			if tries++; tries == 1 { // policy set, while the first try works
				l, err := dataset.LockWriter(context.Background(), data, 0)
				if err != nil {
					return err
				}
				defer l.Release()
				return schedule.Save(data, newP)
			}
			return nil
		}
	}, in)
	if err != nil {
		t.Fatal(err)
	}
	if st.CommitConflicts != 1 || tries != 2 {
		t.Errorf("%d conflicts in %d tries, want 1 in 2", st.CommitConflicts, tries)
	}
	d, err := dataset.OpenReadOnly(data)
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
		t.Fatalf("snapshot %d records a policy with activity_half_life %v, want the one set meanwhile (%v)",
			m.Snapshot, rec.Plan.ActivityHalfLife, newP.Plan.ActivityHalfLife)
	}
	// Two sightings an hour apart: 1 + 2^(-1h/half-life) as of the last.
	if a := readState(t, data)[h].Activity; math.Abs(a-1.5) > 1e-9 {
		t.Fatalf("activity %v, want 1.5 (the new half-life of 1h; 1.97 is the old one's)", a)
	}
}
