package app

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/dhtboot"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/pipeline/capture"
)

func captureCommand() *cli.Command {
	d := capture.DefaultOptions()
	return &cli.Command{
		Name:  "capture",
		Usage: "run DHT nodes and record the infohashes they hear of",
		UsageText: `infohash capture [--duration D] [--node-ids K] [--data DIR] -o FILE|FILE.arrows|-

   infohash capture --duration 10m -o observations.parquet
   infohash capture --duration 10m -o observations.arrows   # an Arrow stream, written as it comes: a kill -9 loses at most 200ms, a machine crash 1s more
   infohash capture --duration 10m --data /srv/ih -o - | infohash dedup --data /srv/ih -
   infohash capture --node-ids 4 --dht-listen :6881 --max-observations 1000000 -o obs.parquet
   infohash capture --now 2026-01-02T03:04:05Z --duration 10m -o obs.parquet   # observed_at from 03:04:05Z on
   */15 * * * *  infohash capture --data /srv/ih --duration 14m -o /srv/ih/in/obs-$(date +\%s).parquet
   (mkdir /srv/ih/in once; "infohash dedup --data /srv/ih /srv/ih/in/" applies the files, skipping those already applied)`,
		Description: `Runs --node-ids DHT nodes (IDs spread over the keyspace) joined through
--bootstrap, and records an observation for every incoming get_peers and
announce_peer (with the announced port) and for every sample of an
active BEP 51 sample_infohashes walk, which samples a node again only
after the interval it asks for (clamped to 60s-21600s, 1s-21600s for a
node on loopback or a private network; 21600s, BEP 51's maximum, when it
gives none) and falls back to find_node where a node answers 204. The
nodes answer queries as BEP 5 and BEP 51 nodes do, at most 20 replies a
second to one address (all nodes together, so that forged floods are not
reflected; loopback, and a private range the run was pointed into, are
not limited), and hand out in "nodes" only nodes that answered one of
the run's queries (a query's source may be forged). Besides the crawl
(--dht-rate), the nodes' own queries (bootstrap, routing-table upkeep)
share one limit of 100 a second, however many --node-ids. A sender's
get_peers of a hash, and its announce_peer of it, are recorded once per
--repeat-window: its repeats within it (a lookup's retries, or a sender
making a hash look busy) are answered, not recorded, and counted in
repeats_dropped. A sender is its IP address (hosts behind one NAT count
as one), with its port on loopback and in a private range the run was
pointed into, where every node may share an address. The set holds
2,097,152 pairs (sender, hash), about 3,500 new ones a second over 10m,
but fills unevenly: from about a quarter of that rate it evicts a few
before their window ends, whose repeats are then recorded again;
repeat_window_evicted counts them (a warning, once a run, when they
reach 1% of the pairs: a shorter --repeat-window holds more a second).
get_peers needs no token, so a sender forging source addresses is many
senders: a hash's get_peers are recorded at most --max-sightings-per-hash
times per --repeat-window over all senders (announce_peer, bound to its
sender's address by the token, is not capped); the rest are answered and
counted in hash_cap_dropped. The cap's table holds 262,144 hashes (8 a
bucket): a new hash whose bucket is full of hashes in their window
evicts the one seen least, whose count starts again; hash_cap_evicted
counts those. The default, 32 (a window, a process), is
only reached by the busiest hashes one process hears of (most come once
or twice a window): they still rank 16 to 32 times above those, and a
forger lifts a hash to their level, not above. 0 (or --repeat-window 0)
caps nothing.

Output is a Parquet file of observations, or an Arrow IPC stream: on stdout
with -o - (refused on a terminal, as is an -o naming one), or into FILE with -o FILE
named *.arrows or *.arrow (any case), written as "-o - > FILE" writes it
(below; a FIFO or device so named, or a link to one, as -o - is). An -o FILE
that exists is refused (exit 2) unless --replace is
given (one a writer holds: exit 75). Rows reach a Parquet file at
least every 30s, and the file reserves its disk space (fallocate) a few
MiB ahead of them: when the disk (or quota, or file size limit) has no
more, the run stops at once and keeps what it had in the file (exit 3,
one line saying how many; no room to start: exit 1, nothing crawled).
A write error is still fatal (exit 1, the file not kept). A Parquet file is
only readable once whole: a kill -9 (or the OOM killer) loses it all.
With -o FILE.arrows, or -o - redirected to a file ("-o - > obs.arrows", as
crawl-pass.sh does), each batch reaches the file within 200ms of its
observations and the disk (fsync) within 1s more, so a kill -9 loses at
most that (a machine crash, that second too): dedup applies the file up to
its last whole batch. It reserves its disk space ahead of the batches too:
at a full disk the run stops and ends the stream after the batches that
fit (exit 3), as above; after a kill -9 up to 5 MiB reserved past the
stream's end stay allocated (du counts them) until the file is removed,
replaced (--replace) or emptied ("> FILE"). While it writes, capture holds
the file's flock(2): dedup and merge skip the file (exit 3) until capture is
done, and a second writer to it exits 75. With --replace, an existing
FILE.arrows stays as it was until the first batch replaces it (the
stream is written beside it until then): a run refused (a --dht-state
in use, exit 75) or killed before that leaves it. The run stops after
--duration or --max-observations; SIGINT or SIGTERM stops it too, and what
was received is still written and committed (exit 130). At a stop each
node goes on reading until its socket has been quiet for 200ms (2s at
most), so packets already on their way are kept. With -o - (or -o naming
a FIFO or device), an output blocked for 10s after the signal (a reader
that reads nothing, a FIFO that no reader opens), or a second signal,
ends the run at once (exit 130): the stream is cut short, and the DHT
state is saved all the same. Node IDs and routing tables are kept in
--dht-state (default DIR/dht-state with --data DIR, where DIR or at least
its parent folder must exist; a --dht-state given may be new, not its
parent folder) so the next run rejoins
warm; a second capture started on a --dht-state in use exits 75 (captures
that run at once need their own), and one whose dht-state.json is of a
version this build does not read exits 2 (a corrupt one is replaced).
A fetch sharing --dht-state saves its node ID there (fetch-dht.json)
before it looks anything up: get_peers (and announce_peer) queries from
that ID are the crawler's own lookups, not sightings, and are not
recorded; fetch_lookups_skipped counts them.

With --now TIME the run's clock starts at TIME and advances at the wall
clock's pace (TIME + the real time elapsed): it stamps observed_at and the
default --run-id, so that a pass replayed or simulated with dedup --now
keeps one clock. --duration and --dht-rate stay in real time.

A run that asked --bootstrap routers or saved nodes and heard no DHT
message at all (no reply, no query) for its whole --duration ends partial
(exit 3), its last line saying so: the network or --bootstrap is down. Its
output (empty) is written all the same; --bootstrap "" with no saved node
asks nobody, and such a run ends 0.

Counters are logged on stderr when done and written by --stats-json;
socket_dropped counts the packets the kernel dropped because a node fell
behind (a flood, a slow output): neither recorded nor answered.
distinct_hashes is exact up to 65,536 hashes, an estimate (within about
2%) past that.

` + exitHelp("capture"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write observations to `FILE` (Parquet; an Arrow IPC stream if named *.arrows or *.arrow), or - for Arrow IPC on stdout"},
			&cli.IntFlag{Name: "node-ids", Value: d.NodeIDs, Usage: "run `K` DHT nodes with IDs spread over the keyspace"},
			dhtboot.Flag(),
			&cli.StringFlag{Name: "dht-listen", Aliases: []string{"listen"}, Value: d.Listen, Usage: "UDP `ADDR` of the first node (node i uses port+i; port 0 picks free ports)"},
			&cli.StringFlag{Name: "dht-state", Usage: "keep node IDs and routing tables in `DIR` between runs", DefaultText: "DIR/dht-state with --data DIR; none without"},
			&cli.StringFlag{Name: "data", EnvVars: []string{"INFOHASH_DATA"}, Usage: "dataset `DIR`; the default --dht-state is DIR/dht-state"},
			durationFlag("duration", 10*time.Minute, "stop after `D` (0: only on --max-observations or a signal)"),
			&cli.Int64Flag{Name: "max-observations", Usage: "stop after writing `N` observations (0: no limit)"},
			&cli.Float64Flag{Name: "dht-rate", Aliases: []string{"max-rps"}, Value: d.MaxRPS, Usage: "at most `N` outgoing DHT crawl queries per second, above 0 (no crawl: --passive)"},
			&cli.BoolFlag{Name: "passive", Usage: "only record incoming queries; no BEP 51 walk"},
			durationFlag("repeat-window", d.RepeatWindow, "record a sender's get_peers (announce_peer) of a hash at most once per `D` (0: every query)"),
			&cli.IntFlag{Name: "max-sightings-per-hash", Value: d.MaxSightingsPerHash, Usage: fmt.Sprintf("record at most `N` get_peers of one hash per --repeat-window, over all senders (0: no cap; at most %d)", capture.MaxSightingsLimit)},
			&cli.StringFlag{Name: "run-id", Usage: "run `ID` written into every observation", DefaultText: "capture-<UTC time>"},
			runningNowFlag("observed_at and the time in the run ID made when --run-id is not given (--duration stays real time)"),
			replaceFlag,
			statsJSONFlag(true),
		},
		Action: runCapture,
	}
}

func runCapture(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageError(fmt.Errorf("capture: unexpected argument %q", c.Args().First()))
	}
	clk, err := parseClock(c)
	if err != nil {
		return err
	}
	o := capture.DefaultOptions()
	o.Clock = clk
	o.NodeIDs = c.Int("node-ids")
	o.Listen = c.String("dht-listen")
	o.Bootstrap = dhtboot.Parse(c.StringSlice("bootstrap"))
	o.StateDir = c.String("dht-state")
	if o.StateDir == "" && c.String("data") != "" {
		o.StateDir = filepath.Join(c.String("data"), "dht-state")
		if _, err := os.Stat(c.String("data")); errors.Is(err, fs.ErrNotExist) {
			// As dedup does: only DIR itself may be new, not its parent (a
			// mistyped --data would otherwise grow a whole tree).
			parent := filepath.Dir(filepath.Clean(c.String("data")))
			if fi, err := os.Stat(parent); errors.Is(err, fs.ErrNotExist) || (err == nil && !fi.IsDir()) {
				return usageError(fmt.Errorf("capture: --data %s: no such folder, and its parent folder %s does not exist to create it in", c.String("data"), parent))
			}
			slog.Warn("capture: --data names no folder yet: it is created, and the DHT state starts cold there (a first run, or a mistyped --data)",
				"data", c.String("data"))
		}
	}
	o.Duration = flagDuration(c, "duration")
	o.MaxObservations = c.Int64("max-observations")
	o.MaxRPS = c.Float64("dht-rate")
	o.Crawl = !c.Bool("passive")
	o.RepeatWindow = flagDuration(c, "repeat-window")
	o.MaxSightingsPerHash = c.Int("max-sightings-per-hash")
	o.RunID = c.String("run-id")
	if o.RunID == "" {
		o.RunID = "capture-" + o.Clock.Now().UTC().Format("20060102T150405Z")
	}
	if !utf8.ValidString(o.RunID) { // every observation's run_id, a STRING column
		return usageError(fmt.Errorf("capture: --run-id %q: not valid UTF-8", o.RunID))
	}
	o.Logger = slog.Default()
	if o.Duration == 0 && o.MaxObservations == 0 {
		slog.Warn("capture: no --duration or --max-observations: running until interrupted")
	}
	out := c.String("output")
	if err := checkDataOutput(c, stageFormat(out)); err != nil {
		return err
	}
	// The stage's output: -o FILE.arrows is "-o -" into FILE (openOutput).
	stdout, stageOut, hold, err := openOutput(c, "capture", c.App.Writer)
	if err != nil {
		return err
	}
	var st capture.Stats
	interrupted := false
	var full error   // the output's disk filled up (rowio.ErrOutputFull)
	var silent error // no DHT node answered, nor queried (exitcode.ErrPartial)
	var kept int64
	var saver stateSaver
	o.StateSaver = saver.set
	err = deliver(c.Context, "capture", out, stdout, withInPlace("capture", out, func(dst output) error {
		w, err := createObservations(dst, stageOut, out)
		if err != nil {
			return fmt.Errorf("capture: %w", err)
		}
		if err := w.Reserve(); err != nil { // no room even to start
			w.Abort()
			return fmt.Errorf("capture: %w; nothing captured", err)
		}
		var runErr error
		st, runErr = capture.Run(c.Context, o, w)
		interrupted = runErr != nil && c.Context.Err() != nil && errors.Is(runErr, c.Context.Err())
		if errors.Is(runErr, rowio.ErrOutputFull) {
			full, runErr = runErr, nil
		}
		if errors.Is(runErr, exitcode.ErrPartial) { // kept: it is written as a run that worked
			silent, runErr = runErr, nil
		}
		if runErr != nil && !interrupted {
			w.Abort()
			return runErr
		}
		if err := w.Close(); err != nil {
			return fmt.Errorf("capture: %w", err) // rowio names the file
		}
		if kept = w.Rows(); full != nil {
			st.StopReason, st.Observations = capture.StopOutputFull, kept
		}
		return nil
	}))
	if errors.Is(err, errUndelivered) {
		// The nodes are blocked handing observations to the writer: their
		// routing tables do not depend on the output, and are saved.
		saver.run("capture")
	}
	if herr := hold.close("capture", err); err == nil {
		err = herr
	}
	if err != nil {
		return err
	}
	slog.Info("capture: done", "stop", st.StopReason, secondsAttr(st.Seconds),
		"packets_in", st.PacketsIn, "queries", queriesAttr(st.Queries), "malformed", st.Malformed,
		"socket_dropped", st.SocketDropped, "sample_responses", st.SampleResponses, "samples", st.Samples,
		"distinct_hashes", st.DistinctHashes, "fetch_lookups_skipped", st.FetchLookups,
		"hash_cap_evicted", st.HashCapEvicted, "hash_cap_dropped", st.HashCapDropped,
		"repeat_window_evicted", st.RepeatEvicted, "repeats_dropped", st.RepeatsDropped,
		"observations", st.Observations, "output", out)
	var runErr error
	if full != nil {
		where := out
		if out == "-" {
			where = "stdout"
		}
		runErr = exitcode.With(exitcode.Partial, fmt.Errorf("capture: stopped early, %v; %d observations kept in %s", fullReason(full), kept, where))
	} else if interrupted {
		where := "committed to " + out
		switch {
		case out == "-":
			where = "written to stdout"
		case stageOut == "-": // a stream, written as it came
			where = "written to " + out
		}
		runErr = exitcode.With(exitcode.Interrupted, fmt.Errorf("capture: interrupted; %d observations %s", st.Observations, where))
	} else {
		runErr = silent
	}
	return writeStatsJSON(c, st, func(reportErr error) error {
		if reportErr != nil {
			return reportErr
		}
		return runErr
	})
}

// createObservations opens capture's output: the stage's (stageOut), or
// for -o FILE.arrows the stream into FILE (stdout, as openOutput left it),
// its errors naming FILE.
func createObservations(dst output, stageOut, out string) (*rowio.Writer[schema.Observation], error) {
	if stageOut != out {
		return rowio.NewArrowWriter[schema.Observation](out, dst.stdout), nil
	}
	return rowio.CreateWith[schema.Observation](dst.open, stageOut, dst.stdout)
}

// fullReason is what a *rowio.FullError in err says, without the
// wrapping of the stage that met it: "no room left for more rows:
// FILE: reserving N bytes: no space left on device".
func fullReason(err error) error {
	if fe, ok := errors.AsType[*rowio.FullError](err); ok {
		return fe
	}
	return err
}

// queriesAttr logs the incoming queries by method as a group
// (queries.get_peers=141 in text, an object in JSON), not as Go's map
// syntax in one string.
func queriesAttr(q map[string]int64) slog.Value {
	methods := slices.Sorted(maps.Keys(q))
	attrs := make([]slog.Attr, 0, len(methods))
	for _, m := range methods {
		attrs = append(attrs, slog.Int64(m, q[m]))
	}
	return slog.GroupValue(attrs...)
}
