package app

import (
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/infohash/infohash/pipeline/fetch"
	"github.com/infohash/infohash/pipeline/schedule"
)

// fetchSure is how many jobs fetch with its default --concurrency and
// --timeout is sure to attempt within a lease of length lease: it runs
// Concurrency jobs at once and gives each at most Timeout, so even jobs
// that all use their whole Timeout make Concurrency x lease / Timeout
// attempts before lease_until (jobs that end sooner make more). Jobs it
// has not started by then it skips as lease_expired.
func fetchSure(lease time.Duration) int64 {
	d := fetch.DefaultOptions()
	return int64(math.Floor(float64(d.Concurrency) * lease.Seconds() / d.Timeout.Seconds()))
}

// leaseBoundHelp is the paragraph of plan-retries --help that gives
// fetchSure's formula and its value for the default lease.
func leaseBoundHelp() string {
	d, lease := fetch.DefaultOptions(), time.Duration(schedule.Default().Plan.Lease)
	return fmt.Sprintf(`fetch attempts --concurrency jobs at once, each for at most its --timeout,
and skips (lease_expired) the jobs whose lease has ended before it started
them: with its defaults (--concurrency %d, --timeout %s) it is sure to
attempt concurrency x lease / timeout jobs within a lease, %d in a %s
one (more when jobs end sooner). A --limit above that bound for the pass's
lease gets one warning, and the run goes on: give a longer --lease, fetch
a higher --concurrency, or a smaller --limit. The final log line's
due_unplanned (also in --stats-json) counts the due hashes the pass left
for later ones (cold ones only in its cold window): far above --limit
pass after pass, it is a backlog that --limit does not drain.`,
		d.Concurrency, showDuration(d.Timeout), fetchSure(lease), showDuration(lease))
}

// warnLimitOverLease logs one warning when limit is more than fetch with
// its defaults is sure to attempt within the pass's lease (fetchSure),
// with what to do about it. lease is --lease, or 0 for the policy's in
// data (none is read from a policy that does not load: the run says why).
func warnLimitOverLease(data string, limit int, lease time.Duration) {
	if lease == 0 {
		p, err := schedule.Load(data)
		if err != nil {
			return
		}
		lease = time.Duration(p.Plan.Lease)
	}
	sure := fetchSure(lease)
	if lease <= 0 || int64(limit) <= sure {
		return
	}
	d := fetch.DefaultOptions()
	// What would make the bound reach limit: a lease (whole minutes up),
	// or a concurrency (when fetch takes one that high). The lease is
	// compared in minutes first: a --limit in the billions needs one
	// whose nanoseconds overflow a Duration.
	needMin := math.Ceil(float64(limit) * d.Timeout.Minutes() / float64(d.Concurrency))
	fix := ""
	add := func(sep, s string) {
		if fix != "" {
			s = sep + s
		}
		fix += s
	}
	if needMin <= schedule.MaxLease.Minutes() { // a longer lease is refused
		add("", fmt.Sprintf("--lease %s or more", showDuration(time.Duration(needMin)*time.Minute)))
	}
	if c := math.Ceil(float64(limit) * d.Timeout.Seconds() / lease.Seconds()); c <= fetch.MaxConcurrency {
		add(", ", fmt.Sprintf("fetch --concurrency %d or more (or a shorter --timeout)", int64(c)))
	}
	if sure > 0 { // --limit 0 would be a dry run, no advice
		add(", or ", fmt.Sprintf("--limit %d or less", sure))
	}
	if fix == "" {
		fix = "a shorter fetch --timeout"
	}
	slog.Warn(fmt.Sprintf("plan-retries: --limit %d is more than fetch with its defaults (--concurrency %d, --timeout %s) "+
		"is sure to attempt within the %s lease: %d (concurrency x lease / timeout); the jobs it has not started by "+
		"lease_until it skips (lease_expired) and a later pass plans again: give %s",
		limit, d.Concurrency, showDuration(d.Timeout), showDuration(lease), sure, fix),
		"limit", limit, "lease", showDuration(lease), "fetch_sure", sure,
		"fetch_concurrency", d.Concurrency, "fetch_timeout", showDuration(d.Timeout))
}
