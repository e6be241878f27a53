package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/internal/plural"
	"github.com/infohash/infohash/pipeline/plan"
	"github.com/infohash/infohash/pipeline/schedule"
)

func planRetriesCommand() *cli.Command {
	d, pd := plan.DefaultOptions(), schedule.Default()
	return &cli.Command{
		Name:  "plan-retries",
		Usage: "lease the hashes to fetch next and write them as jobs",
		UsageText: `infohash plan-retries --data DIR [--now T] [--limit N] [--new-share F] [--lease D] -o FILE|-

   infohash plan-retries --data ./ih --limit 5000 -o jobs.parquet
   infohash plan-retries --data ./ih --limit 0   # a dry run: the summary says what a pass would find due; nothing leased nor written
   infohash plan-retries --data ./ih -o - | infohash fetch - -o - | infohash merge --data ./ih -
   NOW=$(date -u +%FT%TZ); infohash plan-retries --data ./ih --now "$NOW" --seed 7 -o jobs.parquet
   */10 * * * *  infohash plan-retries --data /srv/ih --limit 2000 -o - | infohash fetch - -o - --dht-state /srv/ih/dht-state --deadline 8m | infohash merge --data /srv/ih -`,
		Description: `Picks due hashes: metadata not fetched, next_retry reached, no live lease,
not in DIR/blocklist. At most --limit are planned; never-tried hashes get
their --new-share of --limit first (rounded up, at least one job when any
wait and the share is above 0), so a flood of retries or cold hashes
cannot starve new work; what they leave goes to the others. The rest go
by priority: reactivated first (a sighting pulled their retry forward),
then failed hashes due for longer than the delay they were last given,
the longest waiting first (so a backlog of busier retries starves none),
then activity, fewer attempts, longer waiting, and a seeded hash for ties
(never by prefix). Of the new hashes' jobs, the policy's
plan.new_overdue_share (default 0.1: rounded down, at least one job; 0:
none) go to never-tried hashes due longer than plan.new_overdue_after
(default 7d), the longest waiting first, so that however busy the new
hashes found after it, a quiet one waits a bounded number of passes
(counted as planned_new_overdue, within planned_new). The jobs file
interleaves the pools (new, retried, cold) by their shares of the pass,
each pool best first, so that a fetch stopped early (--deadline) has
tried about each pool's share of the jobs it started: new hashes too.
Cold hashes are read by a budgeted sweep: each pass reads the
cold files of the policy's plan.cold_partitions partitions (default 16)
from where the previous pass stopped (a cursor kept in the manifest and
moved in the pass's commit), so every cold partition is read once every
256/cold_partitions passes whatever the cron interval. Due cold hashes get
the policy's plan.cold_share of --limit (rounded down, but at least one
job, out of what the new share leaves), and any part of --limit that new
and retried hashes leave unused; they go oldest due first among those due
longer than their last delay and the never-tried ones (by when first
due), so neither waits behind the other for ever. With --limit 2 or more
each tier (hot, cold) with due hashes gets a job whatever the shares: a
new share of 1 leaves one to cold hashes, a cold share of 1 one to hot.

A dry run (--limit 0) reads what a pass at the same --now would read (the
hot files, and the cold hashes of the window at the cursor) and reports
the same due counts (due, due_new, due_retry, due_cold), but plans and
leases nothing, drops no stale lease and leaves the cursor where it is,
so the next pass reads that window: it commits nothing (with -o FILE it
still ends the leases of an earlier jobs file at FILE, as below). Without
-o it reads a dataset of an older format as status does, saying so in
one line (nothing migrated nor cleaned: an older binary still opens it,
a copy keeps its id; the next dedup, plan-retries or merge migrates it),
and so a dataset it may not write (a read-only copy or mount), where a
writer stops with one line saying the dataset is not writable (exit 1);
the current format it opens as a writer (which removes what killed
writers left). Cold hashes overdue in other partitions wait for the
sweep: infohash status counts them all (its cold overdue wave).

Jobs (info_hash, hash_type, info_hash_v2, attempt, reason
new|retry|reactivated|cold, lease_id, lease_until, peers, avoid_peers) go
to a Parquet file, or as an Arrow IPC
stream to stdout with -o - (refused, before any lease, on a terminal, as
is an -o naming one: /dev/tty); -o FILE named *.arrows or *.arrow is refused (exit 2): a
stream written into FILE as it goes cannot be published after the commit,
as below. A job's peers are the peers that announced the hash (the
state's peers, newest first), less those penalised at --now. A job's
avoid_peers keeps only the endpoints whose penalty in DIR/peers/ is still
running at --now: once an endpoint's penalty ends it is tried again. The
file also carries, once for all its jobs, every endpoint
penalised in DIR/peers/ with the end of its penalty (metadata key
infohash.avoid_peers: the Parquet file's key-value metadata, or the Arrow
stream's schema metadata; at most 100,000 endpoints and 3 MiB, the longest
penalties first): fetch skips them for every job. Their leases are committed
to DIR/leases/ first:
a second planner does not hand out the same hashes, and a job whose fetch
never reports back returns to the queue when its lease ends. A job's
info_hash_v2 is the state's full v2 hash when the dataset knows it (null
otherwise): fetch checks it, and a wrong one does not blame the peer. A jobs
file is written whole under a hidden temporary name before the leases are
committed (a full disk fails the run with nothing leased) and renamed into
place once they are. A run killed between the two leaves the leases with no
jobs file: the next plan-retries to the same -o FILE drops the leases of
such a file (when the dataset holds them as the file says; no fetch can
have read it), plans its hashes again (its cold ones too, though the
killed run's commit moved the cold sweep on) and removes it; a run to
another FILE leaves them leased until lease_until. An -o FILE that exists
is not written over, as capture's and fetch's: the run exits 2 before it
opens DIR, since FILE may hold jobs
still leased (an earlier run's, not yet fetched and merged: writing over
them would leave those hashes leased to no one until lease_until) or
another command's data. Fetch FILE and merge its results first (merge
frees the leases) and move it away, or give --replace: the run then ends
the leases FILE's jobs still hold in its commit and plans their hashes
again. Only --replace a FILE no fetch is reading: such a fetch
works on jobs whose leases are gone (merge ignores their failures and
stores their metadata late: a hash may be fetched twice). Refusing is the
default because only the caller knows whether a fetch has FILE open. Of
two runs to one -o FILE at once, the one that commits second exits 2 and
leases nothing (with --replace too while the first is still writing FILE). A
FIFO or device named by -o is opened before the dataset (a
FIFO waits for its reader then, with nothing leased) and, like stdout,
written after the commit. If stdout or that FIFO is a pipe whose reader has
gone when the leases are about to be committed (a "| fetch" that exited at
once), the run leases nothing and exits 141, one line on stderr saying so.
If the reader goes after that, before taking the jobs (exit 141, silent for
other commands), one line says how many jobs stay leased, and until when;
with nothing to lease (nothing due, or --limit 0), that nothing was leased.
Each still writes --stats-json and --metrics-file, with reader_gone true
(and, before the commit, planned 0 and planned_dropped the jobs dropped).
With either, an output blocked for 10s after SIGINT/SIGTERM, or a second
signal, ends the run at once (exit 130), saying the same.

Defaults for --new-share, --lease and --seed come from DIR/policy.json
(see infohash policy show). The run reads each hot state file once, keeping
only the best --limit candidates in memory.

` + leaseBoundHelp() + `

` + exitHelp("plan-retries"),
		Flags: []cli.Flag{
			dataFlag, nowFlagOf("what is due (next_retry <= TIME), live leases and penalties, lease_until, planned_at; " +
				"it moves no retry time: merge sets next_retry from fetch's attempted_at (fetch's clock, which runs on from its --now: give each stage of a pass TIME plus the time since the pass began, see infohash clock --started)"),
			statsJSONFlag(true),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write jobs to `FILE` (Parquet; not *.arrows, *.arrow), or - for Arrow IPC on stdout (required unless --limit 0)"},
			&cli.IntFlag{Name: "limit", Value: d.Limit, Usage: "plan at most `N` jobs (0: none, a dry run that counts what a pass would find due, the cold window's too, and leases nothing; without -o it writes nothing, with -o no jobs)"},
			&cli.Float64Flag{Name: "new-share", Usage: "least share `F` of --limit kept for never-tried hashes",
				DefaultText: fmt.Sprintf("the policy's plan.new_share, %v unless changed", pd.Plan.NewShare)},
			policyDurationFlag("lease", "lease jobs for `D`",
				fmt.Sprintf("the policy's plan.lease, %s unless changed", pd.Plan.Lease)),
			&cli.Uint64Flag{Name: "seed", Usage: "tie-break seed `S`",
				DefaultText: fmt.Sprintf("the policy's seed, %d unless changed", pd.Seed)},
			&cli.IntFlag{Name: "keep", Value: d.Keep, Usage: "keep the files of the last `N` snapshots for readers (a commit removes older ones, those an earlier writer with a larger --keep kept too: give every writer the same N)"},
			lockWaitFlag(),
			&cli.BoolFlag{Name: "replace", Usage: "write over an existing -o FILE (without it, an existing FILE is refused: exit 2), ending the leases its jobs still hold (not yet fetched and merged); only if no fetch is reading FILE"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageError(fmt.Errorf("plan-retries: unexpected argument %q", c.Args().First()))
			}
			data, err := requireData(c)
			if err != nil {
				return err
			}
			o := plan.DefaultOptions()
			o.Data, o.Output, o.Stdout = data, c.String("output"), c.App.Writer
			if err := checkDataOutput(c, stageFormat(o.Output)); err != nil {
				return err
			}
			if out := c.String("output"); isStreamName(out) && !fsutil.WrittenInPlace(out) {
				return usageError(fmt.Errorf("plan-retries: -o %s: a jobs file is Parquet, written whole before the leases are "+
					"committed and renamed into place after (an Arrow stream written into FILE as it goes would leave a cut, "+
					"unrecoverable jobs file with its hashes leased); name it .parquet, or stream the jobs: -o - | infohash fetch -", out))
			}
			if err := checkNotReplacing(c); err != nil {
				return err
			}
			o.Limit, o.Keep, o.LockWait, o.Lease = c.Int("limit"), c.Int("keep"), flagDuration(c, "lock-wait"), flagDuration(c, "lease")
			o.Replace, o.ProgressTo = c.Bool("replace"), c.App.ErrWriter
			if c.IsSet("new-share") {
				v := c.Float64("new-share")
				o.NewShare = &v
			}
			if c.IsSet("seed") {
				v := c.Uint64("seed")
				o.Seed = &v
			}
			if o.Now, err = parseNow(c); err != nil {
				return err
			}
			var committed atomic.Pointer[plan.Stats]
			o.Committed = func(s plan.Stats) { committed.Store(&s) }
			st, err := deliverRun(c.Context, "plan-retries", o.Output, o.Stdout, func(dst output) (plan.Stats, error) {
				o.Stdout, o.OpenOutput = dst.stdout, dst.open
				return plan.Run(c.Context, o)
			})
			if errors.Is(err, errUndelivered) {
				if cs := committed.Load(); cs != nil {
					warnStillLeased(*cs, "the jobs could not all be delivered")
				}
				return err
			}
			switch {
			case errors.Is(err, plan.ErrReaderGone):
				// Exit 141 is quiet ("| head" has what it wanted), but a
				// pipeline that wanted jobs gets none: say that nothing
				// was leased (the hashes stay due). The run has an
				// outcome, as after the commit: its counters say it
				// (reader_gone, planned_dropped; planned 0).
				warnNothingLeased(st)
				return endCommitted(c, st, false, st.Snapshot, err, false)
			case exitcode.Of(err) == exitcode.BrokenPipe && st.Planned == 0:
				// Nothing to lease (nothing due, or --limit 0): the
				// line says so, and the report has reader_gone, as on
				// the two paths that leased or dropped jobs.
				noteNothingPlanned(st)
				return endCommitted(c, st, st.Committed, st.Snapshot, err, false)
			case exitcode.Of(err) == exitcode.BrokenPipe:
				// This reader got none of the jobs whose leases are
				// committed: say what stays leased, and until when.
				warnStillLeased(st, "the output's reader went away before taking the jobs")
			}
			if failedAfterCommit(err) {
				// The leases are committed (and the jobs delivered unless
				// err says otherwise): say until when they hold.
				warnStillLeased(st, "the run failed after committing the leases")
				return endCommitted(c, st, st.Committed, st.Snapshot, err, false)
			}
			if err != nil && st.Committed {
				// The jobs could not be delivered (a full disk, a
				// failed rename): the leases hold all the same.
				if exitcode.Of(err) != exitcode.BrokenPipe {
					warnStillLeased(st, "the jobs could not be delivered")
				}
				return endCommitted(c, st, true, st.Snapshot, err, false)
			}
			if err != nil && errors.Is(err, context.Canceled) && c.Context.Err() != nil {
				// Stopped before its commit (after it, st.Committed, above).
				if s := onOpen(err); s != "" {
					return errors.New("plan-retries: interrupted; no hash leased, no jobs written" + s)
				}
				return errors.New("plan-retries: interrupted; nothing committed (no hash leased, no jobs written)")
			}
			if err != nil {
				return err
			}
			warnLimitOverLease(data, o.Limit, o.Lease)
			slog.Info("plan-retries: done", "planned", st.Planned, "new", st.PlannedNew,
				"new_overdue", st.PlannedNewOverdue, "retry", st.PlannedRetry,
				"reactivated", st.PlannedReactivated, "cold", st.PlannedCold, "due", st.Due, "due_unplanned", st.DueUnplanned,
				"due_new", st.DueNew, "due_retry", st.DueRetry, "due_cold", st.DueCold,
				"under_lease", st.Leased, "blocklisted", st.Blocked, "hot_rows", st.Scanned,
				"cold_rows", st.ColdScanned, "lease_id", st.LeaseID, "snapshot", st.Snapshot,
				secondsAttr(st.Seconds))
			return endCommitted(c, st, st.Committed, st.Snapshot, nil, false)
		},
	}
}

// warnStillLeased says which planned jobs stay leased, and until when,
// when their reader got none or only some of them (why).
func warnStillLeased(st plan.Stats, why string) {
	if st.Planned == 0 {
		return
	}
	until := st.LeaseUntil.Format(time.RFC3339)
	verb := map[bool]string{true: "stays", false: "stay"}[st.Planned == 1]
	slog.Warn(fmt.Sprintf("plan-retries: %s: %s %s leased until %s", why, plural.Count(st.Planned, "job", "jobs"), verb, until),
		"jobs", st.Planned, "lease_until", until, "lease_id", st.LeaseID)
}

// noteNothingPlanned says that a run whose output's reader went away
// leased nothing because it planned nothing: nothing was due, or none of
// what was due was planned (--limit 0).
func noteNothingPlanned(st plan.Stats) {
	why := "nothing was due"
	if st.Due > 0 {
		why = fmt.Sprintf("none planned of the %d due", st.Due)
	}
	slog.Info(fmt.Sprintf("plan-retries: the output's reader went away: nothing leased (%s)", why), "jobs", 0, "leased", 0, "due", st.Due)
}

// warnNothingLeased says that the jobs planned were dropped, unleased,
// because the output's reader had gone before the commit.
func warnNothingLeased(st plan.Stats) {
	slog.Warn(fmt.Sprintf("plan-retries: %v: nothing leased (the %s planned were dropped; their hashes stay due)",
		plan.ErrReaderGone, plural.Count(st.Dropped, "job", "jobs")), "jobs", st.Dropped, "leased", 0)
}
