package app

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/pipeline/fetch"
	"github.com/infohash/infohash/pipeline/merge"
)

func mergeCommand() *cli.Command {
	d := merge.DefaultOptions()
	return &cli.Command{
		Name:      "merge",
		Usage:     "fold fetch results (or another dataset) into the dataset",
		ArgsUsage: "RESULTS...",
		UsageText: `infohash merge --data DIR RESULTS...|-
   infohash merge --data DIR --from OTHER_DIR

   infohash merge --data ./ih results.parquet
   infohash plan-retries --data ./ih -o - | infohash fetch - -o - | infohash merge --data ./ih -
   NOW=$(date -u +%FT%TZ); infohash merge --data ./ih --now "$NOW" --stats-json merge.json results/
   infohash merge --data ./ih --from /backup/ih`,
		Description: `RESULTS are fetch result files (Parquet, or an Arrow IPC stream as fetch -o - >
FILE writes it), folders of them (their *.parquet, *.arrows and *.arrow
files, in any case, are read as if named; other files are skipped and
logged: a folder holding none is nothing to do, one info line, exit 0, and
when every RESULTS is such a folder only leftovers in DIR/inbox/merge/, if
any, are applied; DIR must still hold a dataset, as for any merge but
--from, whose plan-retries planned the results: a DIR without one is
refused, exit 2, as with results, so that a typo is told at once; dedup,
which makes a dataset, refuses a DIR only as it would with input), or - for
an Arrow IPC stream on stdin (spooled durably to DIR/inbox/merge/ first: if this
merge is killed or fails, the next one applies it, and a failure says where
it waits; merge --data DIR with no RESULTS
applies such leftovers; a merge killed while still reading, or whose disk
fills while it spools, leaves its whole batches (all it read if its fsync or rename
fails) as DIR/inbox/merge/partial-*, not applied: give it as RESULTS
if fetch will not send them again, and it is removed once applied). A named
RESULTS that can be read only once (a pipe such as <(fetch ... -o -), a
FIFO) is spooled the same way. All of them are applied in one commit;
bad input commits nothing: an info dictionary over --max-metadata-size is,
and so is a detail over 64 KiB, a lease_id over 128 bytes, an outcome or a
peer failure's class over 64, a served_by or peer address over 262.
Compressed results (gzip, zstd, bzip2, xz) are bad input: decompress them
into a pipe (zcat r.gz | infohash merge --data DIR -). Columns are read
with their meaning: an integer of another width, a TIMESTAMP of any unit,
a plain INT64 time (epoch ms), a BLOB info_hash (20 bytes) and a text one
(VARCHAR, utf8: 40 hex digits, as dedup and fetch read it) read as their
values; one whose values would read as something
else (a DATE, TIME or DECIMAL with a scale for an integer, a TIMESTAMP for
a duration, text for bytes) is wrong schema, exit 2, and so is a file in a
Hive partition folder (lease_id=.../, as COPY ... PARTITION_BY writes) that
lacks that folder's column: write it into the files (DuckDB:
WRITE_PARTITION_COLUMNS true). An Arrow stream cut
mid-message (fetch killed while writing a batch) is not bad input: its whole
batches are applied (a result counts once, below) and merge exits 3, saying
how many rows came whole; the jobs whose rows were cut off stay leased until
their lease_until. So is one on stdin or a pipe that ends between two
messages without the end-of-stream marker (fetch killed between two batches;
every writer we know writes the marker): applied, exit 3 (a file named as
RESULTS needs no marker). One cut before its first whole batch is bad input,
and so is one with a result of another dataset's jobs: plan-retries ends
each lease_id with its dataset's id (its manifest's dataset_id; a copy's
first commit draws it a new one, and it still takes the jobs of the old ids
planned before the copy: those of the passes it held leases of, its
manifest's ancestor_passes; the original's later jobs are refused).

A result counts once: it is applied only while its (info_hash, lease_id)
matches the hash's lease from plan-retries, which it then releases. A late
ok (the lease moved on) is still stored; a late failure is ignored and
counted (so is a failure sent again in another input: its first copy
released the lease). A result without a lease_id (a manual fetch of a hash list) is
applied when the hash has no lease in DIR/leases/ (never planned, released
by an earlier result, or expired more than 7 days ago) and its attempt is
newer than the hash's last_attempt; otherwise a failure is ignored and
counted (stale_failures_ignored, late_failures_ignored), an ok still
stored. Ignored is for the hash only (its attempts, backoff and next retry
stay as they are): such a failure's peer_failures still penalise those
endpoints in DIR/peers/ (counted in peer_penalties), since a peer that
failed did so whichever lease asked, and the next jobs of every hash
should skip it. Each input is recorded by checksum, so applying it again
changes nothing. Inputs that hold no result row (a fetch given no job) change
nothing and are not recorded. A merge of such inputs, or of inputs all
applied before, commits a snapshot only when there is housekeeping to do,
as every merge does it: leases that ended over 7 days ago, peer penalties
past peer_penalty.forget (and records nothing in the ledger).

A released result (fetch stopped before attempting the job: no attempt, no
failure) ends its lease when that lease is still the hash's, so that the
next plan-retries can plan the hash at once; it changes nothing else (attempts,
last_attempt, last_failure, next_retry, backoff, metadata_status, tier,
avoid_peers, peer penalties) and is counted in released_rows, or in
stale_releases_ignored when that lease is not the hash's any more (planned
again meanwhile, or ended: a row sent again in another input). An attempt
under the same lease in the same merge counts whatever the order of the rows.

ok: metadata_status=fetched, metadata into DIR/torrents/current/prefix=XX/
(every column decoded from info_bytes, which must hash to the infohash: the
result's name, sizes, files and private are not taken as given), and
hash_type (and info_hash_v2) as the result's, which the metadata proved.
An ok whose info_bytes fetch would refuse today (no valid info dictionary
of its hash_type: a v1 dictionary under a v2 hash, a file without a length)
is that failure, invalid_metadata, and merge warns once per input.
A failure: attempts+1, last_attempt, last_failure (last_failure_at, the
attempt's time, with it) and next_retry from
DIR/policy.json (local_error is not counted: attempts and a failed hash's
last_failure stay, so peer-level failures either side of it are still two in
a row: the second backs the hash off when its attempt tried every peer found);
the endpoints that failed are penalised in DIR/peers/ and avoided by the
hash's next jobs while the penalty lasts. Peer failures count even in a late
or stale result (above); peer_penalties counts those that placed or extended
a penalty (a failure sent again finds its penalty in place: none). Hashes
past the policy's archive thresholds (failed: archive.min_attempts and
archive.unseen; never tried: archive.new_unseen, 90d by default; fetched:
archive.fetched_unseen, off by default) move to the cold tier (never
deleted; planned in the cold sweep).

peers_penalised (fetch skipped every peer found, one's penalty still running,
perhaps earned with another hash) is no failure: attempts, last_failure,
backoff_step and bad_metadata stay, last_attempt is set (as local_error sets
it), the lease is released, and next_retry is retry_after (or retry_soon after
the attempt, if later), the wait spread up to jitter (20%) longer; counted in
failures_deferred. Such a row without retry_after, or with one more than
100 years after its attempted_at (no penalty lasts so long), is bad input.
A failed hash deferred while unseen for archive.unseen moves to the cold
tier then, whatever its attempts (deferrals count none, so it might never
reach archive.min_attempts); archive.unseen 0 turns this off. It counts in
archived_to_cold and, when below archive.min_attempts, in archived_deferred
(a subset of archived_to_cold; in the summary line only when above 0).

--from OTHER_DIR unions another dataset once (a restored backup, a crawler
being retired): first_seen is the earlier (first_source with it), last_seen
the later (the sighted one's when a record has seen_count 0: a fetch result
added it), last_failure_at comes with last_failure, fetched beats
failed beats new, a fetched record's hash_type beats a claim (else v2 if either
says so).
A sighting one side made after the other's last_seen wakes a dormant hash of the
other as dedup's would (reactivated, rewarmed in --stats-json's union).
seen_count, activity and attempts add up only when the two ledgers share no
input (nor records either a union of a snapshot of the other that it still
keeps in manifests/); when they share one, each hash keeps the larger, without
the sightings of inputs only the other side applied. The applied-input ledgers
are unioned, so OTHER_DIR's inputs are then already applied here: applying one of them
again changes nothing, nor brings those sightings back. Repeating the union
changes nothing, so it cannot keep two live crawlers in step: a later union
drops what the other side saw since the first. Give a second crawler's
capture files to dedup here instead (each applies once). OTHER_DIR is only
read, as export reads it: no lock, no migration, nothing written there
(when its writers collect the snapshot being read, their --keep, the union
starts over on the newer one; after 10 restarts it exits 75). Its
files must match its manifest (rows, size, CRC-32C) and its strings keep
within the bounds a results file's do (last_source 256 B, endpoints 262 B,
class names 64 B, torrents' names and paths twice --max-metadata-size), and
a state row's lists within what the writers keep (16 avoid_peers, 8 peers):
a value or list over one is bad input (exit 2), as is a torrent whose
info_bytes do not hash to its info_hash (fetch verifies them; a file's
checksum cannot tell). --from creates a dataset in
DIR only in a new or empty folder (its parent must exist; crawl-pass's files
may be there, as for dedup); another folder
that holds no dataset is refused (exit 2).

` + exitHelp("merge"),
		Flags: []cli.Flag{
			dataFlag, nowFlagOf("live leases and penalties, archiving (unseen since TIME less archive.unseen, new_unseen, fetched_unseen), the limit past which " +
				"an attempted_at, a peer_failures at or an ok's end (fetched_at) is read as the clock (5m), the ledger's applied_at; last_attempt and next_retry follow fetch's " +
				"attempted_at (fetch's clock, which runs on from its --now: give each stage of a pass TIME plus the time since the pass began, see infohash clock --started)"),
			statsJSONFlag(true),
			&cli.StringFlag{Name: "from", Usage: "union the dataset in `OTHER_DIR` into --data"},
			&cli.IntFlag{Name: "keep", Value: d.Keep, Usage: "keep the files of the last `N` snapshots for readers (a commit removes older ones, those an earlier writer with a larger --keep kept too: give every writer the same N)"},
			&cli.Int64Flag{Name: "max-metadata-size", Value: fetch.DefaultMaxMetadataSize, Usage: "a results file (or --from's other dataset) holding an info dictionary over `BYTES` is bad input " +
				"(a results file written by fetch --max-metadata-size N needs the same N here)"},
			lockWaitFlag(),
		},
		Action: func(c *cli.Context) error {
			data, err := requireData(c)
			if err != nil {
				return err
			}
			o := merge.DefaultOptions()
			o.Data, o.Inputs, o.From, o.Stdin = data, c.Args().Slice(), c.String("from"), c.App.Reader
			if err := checkStdin(c, o.Inputs); err != nil {
				return err
			}
			o.Keep, o.LockWait, o.ProgressTo = c.Int("keep"), flagDuration(c, "lock-wait"), c.App.ErrWriter
			o.MaxMetadataSize = c.Int64("max-metadata-size")
			if o.Now, err = parseNow(c); err != nil {
				return err
			}
			if o.From == "" && merge.NothingToApply(o.Data, o.Inputs) {
				// Every RESULTS a folder holding no input file, no leftover
				// in DIR/inbox/merge/: exit 0, nothing committed or made.
				return endCommitted(c, merge.Stats{}, false, 0, nil, false)
			}
			created := noteData("merge --from", o.Data)
			g := withStreamGrace(c.Context, "merge", o.Inputs)
			st, err := merge.Run(g.ctx, o)
			g.done()
			// A partial run (a stream cut mid-message or without its end
			// marker: its whole batches were applied) committed: it
			// reports as a whole one does.
			partial := exitcode.Of(err) == exitcode.Partial
			if err != nil && !failedAfterCommit(err) && !partial {
				if o.From != "" { // one commit, so none (RemoveUnused checks)
					created.undo()
				}
				// Another failure says itself where what stdin sent
				// waits (merge.Run).
				if errors.Is(err, context.Canceled) && c.Context.Err() != nil {
					// merge commits once, at the end: a stop before it
					// commits nothing (as dedup says).
					if streams := streamArgs(o.Inputs); len(streams) > 0 {
						return streamsStopped("merge", o.Data, filepath.Join(o.Data, "inbox", "merge"), streams, err)
					}
					return errors.New("merge: interrupted; " + nothingCommitted(err))
				}
				return err
			}
			switch u := st.Union; {
			case err != nil && !partial: // it failed after committing: no "done"
			case u != nil:
				slog.Info("merge --from: done", "from", u.From, "from_snapshot", u.FromSnapshot,
					"already_merged", u.AlreadyMerged, "counts_added", u.Additive, "hashes_added", u.HashesAdded,
					"hashes_combined", u.HashesCombined, "reactivated", u.Reactivated, "rewarmed", u.Rewarmed,
					"torrents_added", u.TorrentsAdded,
					"snapshot", st.Snapshot, secondsAttr(st.Seconds))
			default:
				attrs := []any{"inputs", st.Inputs}
				if st.InputsBusy > 0 { // only then, as dedup's: a run that skipped none logs the line it did
					attrs = append(attrs, "skipped_busy", st.InputsBusy)
				}
				attrs = append(attrs, "already_applied", st.InputsSkipped,
					"results", st.Results, "future_clamped", st.FutureClamped, "ok_stored", st.Stored, "late_ok_stored", st.LateStored,
					"ok_already_fetched", st.DuplicateOK, "failures_applied", st.Applied, "failures_deferred", st.Deferred,
					"failures_reactivated", st.Reactivated,
					"late_failures_ignored", st.LateFailures, "stale_failures_ignored", st.StaleFailures,
					"released_rows", st.Released, "stale_releases_ignored", st.StaleReleases,
					"leases_released", st.LeasesReleased, "stale_leases_dropped", st.LeasesPruned,
					"peer_penalties", st.PeerPenalties, "peers_forgotten", st.PeersForgotten,
					"archived", st.Archived)
				if st.ArchivedByDefer > 0 { // only then: a run that archived no deferral logs the line it did
					attrs = append(attrs, "archived_deferred", st.ArchivedByDefer)
				}
				slog.Info("merge: done", append(attrs, "snapshot", st.Snapshot, secondsAttr(st.Seconds))...)
			}
			stopped := g.interrupted() // read once: the metrics say the exit it gets
			return endCommitted(c, st, st.Committed, st.Snapshot, err, stopped)
		},
	}
}
