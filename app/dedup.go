package app

import (
	"fmt"
	"log/slog"

	"github.com/urfave/cli/v2"

	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/pipeline/dedup"
)

func dedupCommand() *cli.Command {
	return &cli.Command{
		Name:      "dedup",
		Usage:     "fold observations into the dataset's state (one row per known hash)",
		ArgsUsage: "INPUT...",
		UsageText: `infohash dedup --data DIR INPUT...

   infohash dedup --data ./ih observations.parquet
   infohash capture --duration 5m -o - | infohash dedup --data ./ih -
   infohash dedup --data ./ih hashes.txt          # hex infohashes or magnet URIs, one per line
   infohash dedup --data ./ih --now 2026-01-01T00:00:00Z --stats-json stats.json obs/`,
		Description: `INPUT is an observation Parquet file, a folder of them, a text file of hex
infohashes or magnet URIs (one per line), or - for an Arrow IPC stream (or a
hash list) on stdin. The kind is detected from the content. Stdin is first
spooled durably to DIR/inbox/, so a kill loses nothing already read: a run
killed while still reading leaves its whole batches, which the next run sets
aside as DIR/inbox/partial-*.arrow (listed by "infohash status"; apply it as
an INPUT if the producer will not send it again).

New hashes go to a file of their own in each partition; files holding hashes
seen again are rewritten with only their changed columns re-encoded; a
partition is compacted into one sorted file when it reaches 8 files.

Every input is identified by a checksum of its content: an input already
applied is skipped, so re-running a pass is a no-op. All inputs of one run
are applied in one atomic commit; bad input commits nothing.

` + exitcode.Help,
		Flags: []cli.Flag{
			dataFlag, nowFlag, statsJSONFlag,
			&cli.DurationFlag{Name: "half-life", Value: dedup.DefaultOptions().HalfLife, Usage: "activity half-life"},
			&cli.IntFlag{Name: "keep", Value: 3, Usage: "keep the files of the last `N` snapshots for readers"},
			&cli.DurationFlag{Name: "lock-wait", Usage: "wait up to `D` for another writer instead of failing (exit 75)"},
			&cli.Float64Flag{Name: "bloom-fp", Value: 0.01, Usage: "Bloom filter false-positive rate per partition"},
		},
		Action: func(c *cli.Context) error {
			o := dedup.DefaultOptions()
			data, err := requireData(c)
			if err != nil {
				return err
			}
			o.Data = data
			o.Inputs = c.Args().Slice()
			o.Stdin = c.App.Reader
			o.ProgressTo = c.App.ErrWriter
			o.HalfLife = c.Duration("half-life")
			o.Keep = c.Int("keep")
			o.LockWait = c.Duration("lock-wait")
			o.BloomFP = c.Float64("bloom-fp")
			if o.BloomFP <= 0 || o.BloomFP >= 1 {
				return exitcode.BadInput(fmt.Errorf("--bloom-fp: %v is not between 0 and 1", o.BloomFP))
			}
			now, err := parseNow(c)
			if err != nil {
				return err
			}
			o.Now = now
			if err := bindPolicy(o.Data, &o, c.IsSet("half-life")); err != nil {
				return err
			}
			st, err := dedup.Run(c.Context, o)
			if err != nil {
				return err
			}
			slog.Info("dedup done", "inputs", st.Inputs, "already_applied", st.InputsSkipped,
				"observations", st.Observations, "in_batch_duplicates", st.InBatchDups,
				"bloom_negatives", st.BloomNegatives, "bloom_positives", st.BloomPositives,
				"confirmed_known", st.ConfirmedKnown, "false_positives", st.FalsePositives,
				"new", st.New, "reactivated", st.Reactivated, "state_rows", st.StateRows,
				"snapshot", st.Snapshot, "seconds", fmt.Sprintf("%.2f", st.Seconds))
			return writeStatsJSON(c, st)
		},
	}
}
