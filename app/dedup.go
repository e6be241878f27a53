package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/infohash/infohash/internal/plural"
	"github.com/infohash/infohash/pipeline/dedup"
	"github.com/infohash/infohash/pipeline/schedule"
)

func dedupCommand() *cli.Command {
	batchHashes := dedup.DefaultBatchHashes(false)
	return &cli.Command{
		Name:      "dedup",
		Usage:     "fold observations into the dataset's state (one row per known hash)",
		ArgsUsage: "[INPUT...]",
		UsageText: `infohash dedup --data DIR [INPUT...]

   infohash dedup --data ./ih observations.parquet
   infohash capture --duration 5m -o - | infohash dedup --data ./ih -
   infohash dedup --data ./ih hashes.txt          # hex infohashes or magnet URIs, one per line
   NOW=$(date -u +%FT%TZ); infohash dedup --data ./ih --now "$NOW" --stats-json stats.json obs/   # a re-run with the same NOW equals this run
   infohash dedup --data ./ih --batch-hashes 50000000 archive/2025/   # commit every ~50M distinct hashes
   infohash dedup --data ./ih                     # apply what a locked-out or killed run left in ./ih/inbox/`,
		Description: `DIR gets a new dataset when it holds none and is a new folder
(its parent must exist) or an empty one (crawl-pass's work/, export/,
dht-state/, blocklist and .pass.lock, and a new file system's lost+found/,
may be there); another folder, or one in a dataset, is refused (exit 2).
dedup says so once it has committed to it. A run that made DIR
and then commits nothing (bad input, an error, an interrupt) removes it
again, unless another run has it open or DIR/inbox/ holds what it read from
stdin or a pipe (kept).

INPUT is an observation Parquet file, an Arrow IPC stream file, a folder of
them (its *.parquet, *.arrows and *.arrow files, in any case, and those of
its subfolders at any depth, are read as if named; other files are skipped
and logged: a folder holding none is nothing to do, one info line, exit 0;
when every INPUT is such a folder, DIR is neither opened nor made unless
DIR/inbox/ holds leftovers to apply, but a DIR refused with input is
refused all the same, exit 2: a typo is told at once, while a missing DIR
in an existing folder stays missing until an input makes it; merge, which
makes none, refuses a DIR without a dataset so), a text file of hex
infohashes, magnet URIs or JSON lines (magnetico's, or export --format jsonl's),
one per line, or - for an Arrow IPC stream (or a hash list) on stdin. The kind is
detected from the content; a compressed input (gzip, zstd, bzip2, xz) is bad
input: decompress it into a pipe. A named INPUT that can be read only once (a
pipe such as <(zcat list.gz), a FIFO) is spooled into DIR/inbox/ like stdin,
then applied; a FIFO or device inside a folder INPUT is bad input (exit 2),
never opened. Parquet and Arrow
need only info_hash (20 bytes, or 32 for a v2 hash; fixed-size, BLOB as
DuckDB writes it or binary_view as Polars does; or text of 40 or 64 hex
digits) and observed_at (a timestamp of any unit, Spark's INT96 too, or a
plain 64-bit integer of epoch milliseconds, signed or not, from 2001 to 2200:
else bad input; a DATE, TIME, DECIMAL or narrower integer is wrong schema,
exit 2); hash_type, source and info_hash_v2 are read when present (a hash any
input says is v2 is v2, unless a fetch proved it v1). Dictionary-encoded
Arrow columns (pyarrow categoricals, DuckDB ENUMs) read as their values. A
file in a Hive partition folder (source=dht_get_peers/, as COPY ...
PARTITION_BY writes) that lacks that folder's column is bad input: write the
column into the files (DuckDB: WRITE_PARTITION_COLUMNS true).
An observed_at more than 5 minutes (the clock skew allowed) after the run's
clock (--now, or the wall clock) is read as that clock, so that a host's
wrong clock cannot date a hash's last sighting in the future: such rows are
counted (future_clamped; observations_future_clamped in --stats-json) and
warned about once per input. With --announced-peers, an announce_peer row
whose peer_port is not null but no port (not 1-65535, a BIGINT's 2^40 too,
or past its column's integer type: a UTINYINT holding 300) is read without
an endpoint, counted (bad_peer_ports, the same in --stats-json) and warned
about once per input: its producer is broken; a peer_port that is no
integer (a DOUBLE, text, a STRUCT or LIST), or one without a node_addr of
text (or a BLOB) and a source column beside it, is wrong schema, exit 2 (an
input without peer_port, a hash list, names no peer; one with node_addr and
source but no peer_port is read, and a warning counts its announce_peer
rows, and those whose peer_port is null, once per input).

Stdin is spooled durably to DIR/inbox/ (an Arrow stream or a list is read
while it is spooled; nothing is committed before the spool is whole and
fsynced), so a kill loses nothing already read: a run killed while still
reading leaves its whole batches, which the next run sets aside as
DIR/inbox/partial-*.arrow, and a run whose disk fills while it spools sets
them aside there at once (all of it if its fsync or rename fails; its error names
the file). A stream whose writer was killed is kept the same way, at once:
cut mid-message, its whole batches as DIR/inbox/partial-*.arrow and the cut
message beside it as DIR/inbox/part-*.spool.cut.bad; ended between two
messages without the end-of-stream marker (which every writer we know
writes), all its batches as DIR/inbox/partial-*.arrow. So is a hash list
whose last line has no newline and is not an entry: its whole lines as
DIR/inbox/partial-*.txt, the cut line as DIR/inbox/part-*.spool.cut.bad (a
last line without a newline that is an entry is read). The run applies
none of it and stops as on bad input (exit 2), saying what it kept where.
(A file named as INPUT needs no end-of-stream marker, and a bad last line
in it is bad input; an Arrow file cut mid-message, its writer killed while
writing a batch ("capture -o - > FILE"), has its whole batches applied
and committed, exit 3 (cut inside its first batch, none: only its ledger
entry is committed), and applied again changes nothing (exit 0).) Such a
partial input is listed by "infohash status"; apply it as an INPUT if the
producer will not send it again, or if its writer legitimately omits the
end-of-stream marker: once applied, it is removed. A run that fails once
stdin is whole (a commit on a full disk, locked out) keeps it in DIR/inbox/
for the next run to apply, and its error says where; with no INPUT, dedup
applies only such leftovers (no input, exit 2, when there are none). On
SIGINT/SIGTERM while reading a stream, dedup goes on for up to 10s, so that
what the writer upstream flushes as it stops is applied too (exit 130); a
second signal stops at once.

New hashes go to a file of their own in each partition; files holding hashes
seen again are rewritten with only their changed columns re-encoded; a
partition is compacted into one sorted file when it reaches 8 files.

Every input is identified by a checksum of its content and recorded in the
dataset's ledger (DuckDB: DIR/ledger/current/*.parquet; named by absolute
path): an input already applied is skipped, so re-running a pass is a no-op.
A file read before is not read again while its path, inode, size, mtime and
ctime are unchanged (DIR/input-cache keeps its checksum: a cache, safe to
delete). The inputs of one run are applied in one atomic commit, unless
together they hold more distinct hashes than --batch-hashes: then each group
of whole inputs that reaches it is committed before the next is read (a
backfill of a year of captures does not need a year's worth of memory), and a
killed run resumes after the last group committed. Bad input commits nothing
(exit 2): every Parquet input's footer and schema are checked before the
first group is read. A fault found only by reading (a text list, an Arrow
stream, a damaged page) after a group was committed ends the run partial
(exit 3), naming the input.

` + exitHelp("dedup"),
		Flags: []cli.Flag{
			dataFlag, nowFlagOf("new hashes' next_retry (due at once), the limit past which an observed_at is read as the clock, " +
				"the ledger's applied_at; last_seen and reactivation follow the sightings' observed_at (capture's clock, which runs on from its --now: give each stage of a pass TIME plus the time since the pass began, see infohash clock --started)"),
			statsJSONFlag(true),
			policyDurationFlag("half-life", "activity half-life `D` for this run",
				fmt.Sprintf("the policy's plan.activity_half_life, %s unless changed", schedule.Default().Plan.ActivityHalfLife)),
			&cli.IntFlag{Name: "keep", Value: 3, Usage: "keep the files of the last `N` snapshots for readers (a commit removes older ones, those an earlier writer with a larger --keep kept too: give every writer the same N)"},
			lockWaitFlag(),
			&cli.BoolFlag{Name: "announced-peers", Usage: "keep the endpoints of announce_peer rows (node_addr's IP, peer_port) in the state's peers, newest 8 per hash, for plan-retries to hand to fetch (off: the state's peers are kept as they are; on costs ~40% more time and ~30% more memory when a fifth of the rows are announcements; crawl-pass turns it on)"},
			&cli.Float64Flag{Name: "bloom-fp", Value: 0.01, Usage: "Bloom filter false-positive `RATE` per partition (0 < RATE < 1)"},
			&cli.Int64Flag{Name: "batch-hashes", Value: batchHashes,
				Usage:       "commit once the inputs read hold `N` distinct hashes, and go on with the rest in further commits (an input is never split; 0: one commit)",
				DefaultText: batchHashesDefault(batchHashes, dedup.DefaultBatchHashes(true))},
		},
		Action: func(c *cli.Context) error {
			o := dedup.DefaultOptions()
			data, err := requireData(c)
			if err != nil {
				return err
			}
			o.Data = data
			o.Inputs = c.Args().Slice()
			if err := checkStdin(c, o.Inputs); err != nil {
				return err
			}
			o.Stdin = c.App.Reader
			o.ProgressTo = c.App.ErrWriter
			o.HalfLife = flagDuration(c, "half-life")
			o.Keep = c.Int("keep")
			o.LockWait = flagDuration(c, "lock-wait")
			o.BloomFP = c.Float64("bloom-fp")
			o.AnnouncedPeers = c.Bool("announced-peers")
			o.BatchHashes = c.Int64("batch-hashes")
			if !c.IsSet("batch-hashes") { // peers kept cost more a hash
				o.BatchHashes = dedup.DefaultBatchHashes(o.AnnouncedPeers)
			}
			now, err := parseNow(c)
			if err != nil {
				return err
			}
			o.Now = now
			if dedup.NothingToApply(o.Data, o.Inputs) {
				// Every INPUT a folder holding no input file, no leftover in
				// DIR/inbox/: exit 0, DIR neither opened nor made.
				return endCommitted(c, dedup.Stats{}, false, 0, nil, false)
			}
			created := noteData("dedup", o.Data)
			if err := bindPolicy(o.Data, &o, c.IsSet("half-life")); err != nil {
				created.undo()
				return err
			}
			g := withStreamGrace(c.Context, "dedup", o.Inputs)
			st, err := dedup.Run(g.ctx, o)
			g.done()
			if err != nil && st.Commits == 0 {
				created.undo()
			}
			if err != nil && errors.Is(err, context.Canceled) && c.Context.Err() != nil {
				if streams := streamArgs(o.Inputs); st.Commits == 0 && len(streams) > 0 {
					return streamsStopped("dedup", o.Data, filepath.Join(o.Data, "inbox"), streams, err)
				}
				if st.Commits == 0 {
					return errors.New("dedup: interrupted; " + nothingCommitted(err))
				}
				return fmt.Errorf("dedup: interrupted after %s (snapshot %d); re-run to apply the rest", plural.Count(st.Commits, "commit", "commits"), st.Snapshot)
			}
			// A run that left part of its input out (an Arrow file cut
			// mid-message) applied the rest: it reports as a whole one does.
			leftOut := errors.Is(err, dedup.ErrLeftOut)
			if err != nil && !failedAfterCommit(err) && !leftOut {
				return err
			}
			if err == nil || leftOut { // else it failed after committing: no "done"
				attrs := []any{"inputs", st.Inputs}
				if st.InputsBusy > 0 { // only then: a run that skipped none logs the line it did
					attrs = append(attrs, "skipped_busy", st.InputsBusy)
				}
				slog.Info("dedup: done", append(attrs, "already_applied", st.InputsSkipped,
					"observations", st.Observations, "future_clamped", st.FutureClamped, "bad_peer_ports", st.BadPeerPorts,
					"in_batch_duplicates", st.InBatchDups,
					"bloom_negatives", st.BloomNegatives, "bloom_positives", st.BloomPositives,
					"confirmed_known", st.ConfirmedKnown, "false_positives", st.FalsePositives,
					"new", st.New, "reactivated", st.Reactivated, "rewarmed", st.Rewarmed, "state_rows", st.StateRows,
					"commits", st.Commits, "snapshot", st.Snapshot, secondsAttr(st.Seconds))...)
			}
			stopped := g.interrupted() // read once: the metrics say the exit it gets
			return endCommitted(c, st, st.Commits > 0, st.Snapshot, err, stopped)
		},
	}
}

// batchHashesDefault says what --batch-hashes defaults to on this
// machine: n, or withPeers with --announced-peers.
func batchHashesDefault(n, withPeers int64) string {
	if n == 0 {
		return "0, one commit (this machine's memory is unknown)"
	}
	return fmt.Sprintf("%d, what half of this machine's memory holds (%d with --announced-peers)", n, withPeers)
}
