package plan

import (
	"errors"
	"fmt"

	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/pipeline/schedule"
)

// check refuses options no run takes (bad input, exit 2), before the
// dataset is opened: a negative --limit, a --new-share outside [0, 1], a
// --lease outside [schedule.MinLease, schedule.MaxLease] (0: the
// policy's), no output but for a dry run.
func (o Options) check() error {
	if o.Limit < 0 {
		return exitcode.BadInput(fmt.Errorf("plan-retries: --limit %d is negative", o.Limit))
	}
	if o.NewShare != nil && !(*o.NewShare >= 0 && *o.NewShare <= 1) {
		return exitcode.BadInput(fmt.Errorf("plan-retries: --new-share %v is outside [0, 1]", *o.NewShare))
	}
	if o.Lease < 0 {
		return exitcode.BadInput(fmt.Errorf("plan-retries: --lease %v is negative", o.Lease))
	}
	if o.Lease > 0 && o.Lease < schedule.MinLease {
		return exitcode.BadInput(fmt.Errorf("plan-retries: --lease %v is shorter than %v", schedule.Duration(o.Lease), schedule.Duration(schedule.MinLease)))
	}
	if o.Lease > schedule.MaxLease {
		return exitcode.BadInput(fmt.Errorf("plan-retries: --lease %v is longer than %v", schedule.Duration(o.Lease), schedule.Duration(schedule.MaxLease)))
	}
	if o.Output == "" && o.Limit != 0 {
		return exitcode.BadInput(errors.New("plan-retries: no output: only a dry run (--limit 0) writes no jobs"))
	}
	return nil
}
