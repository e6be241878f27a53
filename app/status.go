package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/internal/plural"
	"github.com/infohash/infohash/pipeline/status"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "summarise a dataset: hashes by status, tier and failure class, table sizes, retry waves",
		UsageText: `infohash status --data DIR [--now TIME] [--format text|json] [--verify]

   infohash status --data /srv/ih
   infohash status --data /srv/ih --format json | jq .retry_waves_by_tier_and_kind.hot
   infohash status --data /srv/ih --verify     # also check every file against the manifest`,
		Description: `Reads the latest committed snapshot and writes nothing under DIR: no lock
taken, no migration (a dataset of an older format is read as it is; the next
dedup, plan-retries or merge migrates it), so it works on a read-only copy
and while a writer runs. When a writer's commit removes the files of the snapshot
being read (they stay for the writers' --keep snapshots), status starts
over on the newer snapshot, up to 5 times, rather than report them
missing. The dataset line ends with the dataset's id (dataset_id: the end
of the lease IDs plan-retries writes; merge refuses another dataset's;
null until a writer migrates a dataset of format 7; "copied from ID" once
a copy's first commit gave it its own: JSON's ancestor_ids, and copied
until then; ancestor_passes, the passes of each ancestor's jobs merge
takes, those the copy held leases of). "leased" counts the live leases
of DIR/leases/ (jobs planned and not yet merged), "leases_expired" the
ones whose lease_until passed with no result merged (the fetch died or
its results were not merged; the hashes are planned again),
"oldest_expired_lease_until" the earliest of those. The retry
waves count the hashes not fetched, leased nor blocklisted by when their
next retry falls due (a null one is overdue), each hash in one wave:
overdue, within_1h, within_1d (after the first hour), within_7d,
within_30d, later; split by tier (cold: a cold file's or tier's row) and
kind (retry: failed before; new: never tried). Hot overdue retries are
what plan-retries counts as due_retry at the same time, hot overdue new
hashes its due_new; cold hashes are planned only in its cold sweep, a few
a pass, so they stay overdue for long: alert on the hot ones. The waves
are the keys of retry_waves in --format json (all tiers and kinds: jq
.retry_waves.within_1h) and of retry_waves_by_tier_and_kind (jq
.retry_waves_by_tier_and_kind.hot.retry.overdue), and the wave label of
the metrics file (with tier and kind labels); the text has a column per
tier and kind and says "next hour", "next day", "next week", "next
month". The overdue retries are split by tier and last failure class
(other: none of the policy's classes) in
overdue_retries_by_tier_and_last_failure (jq
.overdue_retries_by_tier_and_last_failure.hot.no_peers), the metrics
file, and a text line naming each tier's commonest classes when any
retry is overdue. The "DuckDB" line reads the current state files, the
"frozen" line globs this snapshot's alone (they stay for --keep snapshots);
while the snapshot holds no state (a new dataset: no dedup has committed
observations yet) both say "none" and what writes it, and state_glob and
frozen_state_glob are null in --format json (a glob would match no file).
An "unapplied work" line names a file scripts/cron/crawl-pass.sh keeps
under DIR/work/PASS/ (observations.arrows, results.arrows; older passes'
.parquet) that dedup or merge has not committed (no FILE.applied marker
beside it): a pass that stopped or failed left it for the next pass, or,
briefly, a pass running now has yet to apply it; and DIR/work/jobs.parquet
while its leases are live (unapplied_work in --format json). A "not ours"
line names a file (or a folder) under DIR/inbox/ that no run wrote, which
dedup and merge leave alone and never read: they take only their own
spools there (foreign_files in --format json; the text lists the first 10).
--format json gives dir and every path it lists absolute (the text: DIR as
given, but in its DuckDB and frozen lines), so that a job reading it in
another folder finds them.

--verify reads every file of the snapshot (data and Bloom filters) and
compares its size and CRC-32C with what the manifest recorded when it was
written: a missing, truncated or altered file is listed and the exit status
is 1. Nothing is then read from the files: "hashes" is the manifest's row
count, and the counts that read them (by status, tier and failure, leased,
leases_expired, retry waves, last input) are left out of the text and null
in --format json. It changes nothing. Snapshots share the files a commit
left unchanged (hard links), so older ones hold the same damage: restore the
file at the same path from a backup of the dataset (files never change once
written) and run --verify again. There is no repair command: until then
every command that reads the file fails, and while its size is wrong so does
every commit whose snapshot would name it (a commit checks the size of each
file).

--metrics-file writes gauges for alerting (infohash_status_*): hashes by
metadata_status and tier, failed hashes by last failure, live and expired
leases (alert on infohash_status_leases_expired > 0: jobs lost), overdue
retries and the retry waves by tier and kind (alert on
infohash_status_overdue{tier="hot",kind="retry"}), overdue retries by tier
and last failure (infohash_status_overdue_retries), rows and bytes per
table, inputs applied and when the last one was, partial, pending and
spooling inputs, foreign files (foreign_files), unapplied work files
(unapplied_work_files), the bytes held by what a failed or killed commit
built for a snapshot it never published and by the folders under staging/ (a
running writer's, or a killed one's: the next writer removes those; the
text lists both), and the snapshot's number and commit time. With --verify
it also has verified_files and verify_problems; when files are damaged it
has only those, the snapshot, the totals (the manifest's) and
blocklist_unreadable (the counts would read the damaged files), and keeps
the last success's time. blocklist_unreadable is 1 when
DIR/blocklist cannot be read (a line that is not a hash: plan-retries and
export refuse to run): status then writes its report and every gauge but
the retry waves and overdue counts (null in --format json, with the error in
blocklist_error), and exits 1 naming DIR/blocklist:LINE. It takes a file
or FIFO, not - (the report is on stdout).

Totals: every commit adds the work it applied to the dataset's totals, in
its manifest, once (a failed commit or an input applied again adds
nothing; merge --from adds none). A dataset made before format 7 counts
them from its migration: the text's "totals" line says "since the
migration at TIME", --format json has TIME as "totals_since" (else null).
The text's "totals" line sums them, --format json has them as "totals"
(NAME or NAME:LABEL to a count), and --metrics-file as Prometheus counters
infohash_dataset_NAME_total: dedup_inputs, dedup_observations,
dedup_new_hashes, dedup_reactivated, dedup_rewarmed, plan_jobs{kind},
plan_jobs_new_overdue (plan-retries' planned_new_overdue: new jobs by the
overdue reserve, within plan_jobs{kind="new"}; also on the text's line;
counted from this build on, 0 in older datasets), merge_inputs,
merge_results, merge_attempts{outcome}, merge_torrents,
merge_unknown_hashes, merge_archived_to_cold, merge_failures_deferred
(peers_penalised results: retries merge deferred to the end of a peer's
penalty, also on the text's line; the state keeps no mark of a deferral,
so status cannot count the hashes waiting on one). Use rate() on them.

` + exitHelp("status"),
		Flags: []cli.Flag{dataFlag, nowFlag,
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "text", Usage: "print the report as `text|json`"},
			&cli.BoolFlag{Name: "verify", Usage: "also check every file's size and CRC-32C against the manifest"}},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return exitcode.BadInput(fmt.Errorf("status: unexpected argument %q (the dataset is --data DIR)", c.Args().First()))
			}
			data, err := requireData(c)
			if err != nil {
				return err
			}
			now, err := parseNow(c)
			if err != nil {
				return err
			}
			f := c.String("format")
			if f != "text" && f != "json" {
				return badFlag(c, "--format %q: want text or json", f)
			}
			o := status.Options{Verify: c.Bool("verify"), ProgressTo: c.App.ErrWriter}
			r, err := status.Run(c.Context, data, now, o)
			if interrupted(c, err) {
				return exitcode.With(exitcode.Interrupted, errors.New("status: interrupted"))
			}
			if err != nil {
				return err
			}
			if f == "json" {
				e := json.NewEncoder(c.App.Writer)
				e.SetIndent("", "  ")
				if err := e.Encode(r); err != nil {
					return err
				}
			} else if err := printed(c.App.Writer, "status", func(w io.Writer) error { r.Print(w); return nil }); err != nil {
				return err
			}
			if p := c.String("metrics-file"); p != "" {
				// As every command's: - is stdout, a file is replaced
				// atomically with the umask's mode, a FIFO written in place.
				b, err := labelMetrics(c, r.Metrics(time.Since(started), time.Now(), lastSuccess(c.Command.Name, p)))
				if err != nil {
					return fmt.Errorf("status: --metrics-file: %w", err)
				}
				if err := writeReport(c, "metrics-file", p, b); err != nil {
					return err
				}
			}
			if v := r.Verified; v != nil && len(v.Problems) > 0 {
				verb := "do not match"
				if len(v.Problems) == 1 {
					verb = "does not match"
				}
				return fmt.Errorf("status: %s: %d of %s %s the manifest of snapshot %d", data, len(v.Problems), plural.Count(v.Files, "file", "files"), verb, r.Snapshot)
			}
			if r.BlocklistError != nil {
				return fmt.Errorf("status: %s", *r.BlocklistError) // names DIR/blocklist:LINE
			}
			return nil
		},
	}
}
