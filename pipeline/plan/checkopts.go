package plan

import (
	"errors"
	"fmt"
	"time"

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

// lastTextTime is the last time RFC 3339 can write (its years are
// 0000-9999), in schema milliseconds.
var lastTextTime = time.Date(9999, 12, 31, 23, 59, 59, 999_000_000, time.UTC).UnixMilli()

// checkLeaseEnd refuses (bad input) a pass whose leases, planned at now
// for lease, would end after lastTextTime: --now is in the year 9999,
// but lease_until would not be (--stats-json could not write it, nor
// any RFC 3339 reader read it back).
func checkLeaseEnd(now int64, lease time.Duration) error {
	if until := now + lease.Milliseconds(); until > lastTextTime {
		return exitcode.BadInput(fmt.Errorf("plan-retries: --now %s: the %s lease would end in the year %d, "+
			"after the years 0000-9999 that RFC 3339 can write", time.UnixMilli(now).UTC().Format(time.RFC3339Nano),
			schedule.Duration(lease), time.UnixMilli(until).UTC().Year()))
	}
	return nil
}
