package app

import (
	"errors"
	"io/fs"
	"os"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/pipeline/dedup"
	"github.com/infohash/infohash/pipeline/schedule"
)

// loadPolicy reads DIR/policy.json, writing the documented defaults first
// when the dataset has none yet (never over one that "policy set" wrote
// meanwhile: the defaults only take a free name), with DIR in use
// (dataset.Use: another run's clean-up of the new dataset does not remove
// DIR under the write). A bad policy file is bad input.
func loadPolicy(dir string) (schedule.Policy, error) {
	if _, err := os.Stat(schedule.Path(dir)); errors.Is(err, fs.ErrNotExist) {
		use, err := dataset.Use(dir)
		if err != nil {
			return schedule.Policy{}, err
		}
		defer use.Close()
		if policyDirReady != nil {
			policyDirReady(dir)
		}
		if err := schedule.SaveDefault(dir); err != nil {
			return schedule.Policy{}, err
		}
	}
	p, err := schedule.Load(dir)
	if err != nil {
		return p, exitcode.BadInput(err)
	}
	return p, nil
}

// policyDirReady, if set (by tests), runs when loadPolicy has DIR and is
// about to write the default policy into it.
var policyDirReady func(dir string)

// bindPolicy gives dedup the scheduler's reactivation rule and the
// policy's activity half-life (unless --half-life overrides it), and has
// each of dedup's tries bind them again to the policy its transaction
// began with (after a "policy set", a re-applied try runs under the new
// one).
func bindPolicy(dir string, o *dedup.Options, halfLifeSet bool) error {
	p, err := loadPolicy(dir)
	if err != nil {
		return err
	}
	bindTo(o, p, halfLifeSet)
	o.BindPolicy = func(o *dedup.Options, tx *dataset.Tx) error {
		p, err := schedule.Of(tx)
		if err != nil {
			return exitcode.BadInput(err)
		}
		bindTo(o, p, halfLifeSet)
		return nil
	}
	return nil
}

func bindTo(o *dedup.Options, p schedule.Policy, halfLifeSet bool) {
	o.Reactivate = func(st *schema.State, at, announcedAt int64) bool { return schedule.Reactivate(p, st, at, announcedAt) }
	o.Policy = p.JSON()
	if !halfLifeSet {
		o.HalfLife = time.Duration(p.Plan.ActivityHalfLife)
	}
}
