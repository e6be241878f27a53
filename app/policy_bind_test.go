package app

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/pipeline/dedup"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestBindPolicyRebindsEachTry: dedup's options bound to the policy as
// the run starts are bound again, at each try, to the policy the try's
// transaction began with: a "policy set" since the start reaches the
// run (--half-life still overrides the policy's half-life).
func TestBindPolicyRebindsEachTry(t *testing.T) {
	for _, halfLifeSet := range []bool{false, true} {
		dir := t.TempDir()
		d, err := dataset.Open(context.Background(), dir, dataset.OpenOptions{Create: true})
		if err != nil {
			t.Fatal(err)
		}
		o := dedup.DefaultOptions()
		o.HalfLife = 5 * time.Minute // as --half-life 5m would
		if err := bindPolicy(dir, &o, halfLifeSet); err != nil {
			t.Fatal(err)
		}
		p := schedule.Default()
		p.Plan.ActivityHalfLife = schedule.Duration(time.Hour)
		if err := schedule.Save(dir, p); err != nil { // policy set, after the run started
			t.Fatal(err)
		}
		tx, err := d.Begin()
		if err != nil {
			t.Fatal(err)
		}
		err = o.BindPolicy(&o, tx)
		tx.Abort()
		if err != nil {
			t.Fatal(err)
		}
		want := time.Hour
		if halfLifeSet {
			want = 5 * time.Minute
		}
		if !bytes.Equal(o.Policy, p.JSON()) || o.HalfLife != want {
			t.Errorf("--half-life set %v: bound to half-life %v and policy %q; want %v and the policy set", halfLifeSet, o.HalfLife, o.Policy, want)
		}
	}
}
