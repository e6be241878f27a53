package app

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/infohash/infohash/internal/dhtboot"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/pipeline/fetch"
)

func fetchCommand() *cli.Command {
	d := fetch.DefaultOptions()
	return &cli.Command{
		Name:      "fetch",
		Usage:     "fetch and verify torrent metadata (BEP 9) for a batch of jobs",
		ArgsUsage: "JOBS|-",
		UsageText: `infohash fetch [flags] JOBS|- -o FILE|FILE.arrows|-

   infohash plan-retries --data /srv/ih -o - | infohash fetch --dht-state /srv/ih/dht-state - -o - | infohash merge --data /srv/ih -
   infohash fetch jobs.parquet -o results.parquet --concurrency 200 --deadline 50m --stats-json fetch.json
   infohash fetch jobs.parquet -o results.arrows --deadline 50m   # an Arrow stream, written as it comes: a kill -9 loses at most 1s, a machine crash 1s more
   infohash fetch jobs.parquet -o results.parquet --encryption prefer   # MSE first: fewer dials where many peers require encryption
   infohash fetch jobs.parquet -o results.parquet --no-dht --peer 127.0.0.1:6881 && duckdb -c "select outcome, count(*) from 'results.parquet' group by 1"
   NOW=2026-01-02T03:04:05Z START=$(infohash clock); infohash plan-retries --data /srv/ih --now "$NOW" -o jobs.parquet && infohash fetch --now "$(infohash clock --now "$NOW" --started "$START")" jobs.parquet -o results.parquet && infohash merge --data /srv/ih --now "$(infohash clock --now "$NOW" --started "$START")" results.parquet   # one simulated clock`,
		Description: `Reads jobs (at least an info_hash column; the planner's attempt, lease_id,
lease_until, peers and avoid_peers are used when present) and writes one result row per
attempted job (and, when it stops early, one released row per leased job it did not
attempt: see below). JOBS is Parquet (a file), an Arrow IPC stream, or a text list of
infohashes (one hex infohash, magnet URI or JSON line a line, as dedup reads;
blank lines and # comments skipped), told apart by content; hashes from a list are jobs
without a lease. Compressed jobs (gzip, zstd, bzip2, xz) are bad input: decompress them
into a pipe (zcat jobs.gz | infohash fetch - -o FILE), Parquet into a file. A hash is
attempted once per run: a row repeating an earlier row's
info_hash (a hash list, or capture's observations given as jobs) is skipped and counted
in duplicates, not in jobs. JOBS holding no job (an idle plan) ends the run at once, exit 0,
with an empty output, starting no DHT node (a jobs file is read before --dht-state is locked,
and leaves it untouched). info_hash is FIXED_LEN_BYTE_ARRAY(20) as plan-retries writes it,
or a BLOB (BYTE_ARRAY) as DuckDB writes it: 20 bytes, or 32 for a full v2 hash (text, a
VARCHAR or an Arrow utf8, holds 40 or 64 hex digits, and an info_hash_v2 of text 64, as
dedup reads them); any other is bad input naming the file and row, as is an info_hash_v2
that is not the row's info_hash (32 bytes) or does not start with it (20). The endpoints
listed in the jobs file's metadata (key infohash.avoid_peers, written by plan-retries from
DIR/peers/) are skipped for every job until their penalty ends, as a job's own avoid_peers
are for that job; both count in peers_avoided. A malformed list is bad input.

Peers come from the job's peers column, from --peer, and from get_peers lookups on
fetch's own DHT node (never announced), which joins through --bootstrap as capture's
nodes do (same syntax, same default public routers). As capture, fetch dials and queries
only public IPv4 addresses, and loopback or private ones in a range a --bootstrap or
--peer address is in (for loopback, also a --dht-listen there, even with --no-dht); a
--peer is always dialled. The peers it skips so (0.0.0.0, multicast, broadcast, IPv6,
host names too) count in peers_out_of_reach; a job left with none is no_peers,
penalising no peer. Metadata is fetched over BEP 3/10/9 and checked against the
infohash: either SHA-1 of the info dictionary (v1) or the first 20 bytes of its SHA-256
(v2) must equal it, whatever the job's hash_type says (a label from some input); an ok
result's hash_type says which did, and info_hash_v2 holds the SHA-256 of a v2 one. A job's
full 32-byte v2 hash (a 64-hex hash in a list, a magnet's btmh, a 32-byte info_hash, an
info_hash_v2 column) is a claim too: metadata proving the 20-byte infohash by SHA-1, or by
another SHA-256, refutes it; the ok result then carries the proven type and hash (merge
puts them in the state), its detail names the wrong claim, and it counts in
v2_claims_refuted. Metadata matching neither is hash_mismatch.

With --dht-state DIR, fetch keeps its DHT node's ID and the nodes that answered it in
DIR/fetch-dht.json (written atomically when it exits, interrupted or not, and a new ID
before its first query: a capture on DIR leaves that ID's lookups out) and starts the
next run from them: it pings them and begins its lookups as soon as some answer, without
contacting the --bootstrap routers, which it only uses when none of the saved nodes
answers. DIR is made if missing, in a parent folder that exists (else exit 2).
There is no default (fetch takes no --data); a cron pipeline can share capture's
DIR/dht-state: fetch's files (fetch-dht.json, fetch.lock) are not capture's, so a capture
and a fetch may run on one directory at once. Two fetches may not: a fetch holds
DIR/fetch.lock while it runs, and a second one on the same DIR exits 75 before reading a
job (give fetches that run at once their own --dht-state). A state file that is corrupt or
not fetch's is named in a warning and ignored: the run bootstraps and replaces it. With
--bootstrap "" the saved nodes are the only contacts (as for capture). Without a DHT
(--no-dht) the directory is not used. Before its first lookup fetch waits for the saved
nodes' pings, or up to 15s for the bootstrap to fill its routing table; --debug logs
that wait as it starts, the table's size every second, and when and why it ends.

Peers set to require encryption (qBittorrent's and Transmission's "require encryption")
hang up on a plaintext handshake. --encryption says when fetch speaks Message Stream
Encryption (MSE/PE) instead, offering RC4 and plaintext after the key exchange, with its
BEP 3 handshake as MSE's initial payload. prefer-plain (the default) handshakes in
plaintext and dials a peer again over MSE once if it hung up before a byte of its
handshake or answered with bytes that are no handshake (an MSE key), within the peer's
--peer-timeout; a peer that spoke one way earlier in the run is spoken to that way at
once, and not dialled again for a hang-up (it lacks that hash). Round trips to a peer's
handshake, dial included: a plaintext peer 2 (as before), a peer requiring MSE 5. prefer
handshakes over MSE first (3 round trips and a key exchange per peer; a peer that hangs
up on it without a byte is dialled again in plaintext: 5), as libtorrent's and
anacrolix's defaults do; require speaks MSE only; off plaintext only. A peer that hangs
up both ways stays peer_lacks_torrent; one whose MSE answer is garbage (no verification
constant where one must be) is handshake_failed. An ok result's detail says when its
metadata came over MSE; mse_handshakes, mse_handshakes_ok and encryption_retries (second
dials) count them in the summary and --stats-json.

Each result has exactly one outcome: ok, or the failure class that ranks highest among
the peers' failures: hash_mismatch > too_large > invalid_metadata > rejected >
no_ut_metadata > no_extension > handshake_failed > peer_lacks_torrent > local_error >
timeout > connect_failed > no_peers. peer_lacks_torrent is a peer that hung up on the
handshake naming the hash (or answered for another): it does not serve this torrent, which
says nothing of the others, so merge penalises no endpoint for it (handshake_failed is a
peer that is not BitTorrent or broke off after answering for the hash). Every peer's
failure is listed in peer_failures, except a peer that served metadata matching the
infohash that is no valid info dictionary (the hash's fault, reported as
invalid_metadata, not the peer's). An attempt
that found peers but skipped all of them as penalised, one penalty (for any hash)
still running, reports peers_penalised, no failure of the hash, with retry_after the
earliest end of those running penalties: merge defers the hash to it. A job's
avoid_peers endpoint the file's list does not date (a jobs file an older plan-retries
wrote has no list) is taken as a penalty still running, its end unknown: retry_after
is then the attempt's own time (merge waits the policy's retry_soon). One the list
dates as ended (the penalty ended after the plan) is dialled like any peer. Such an
attempt is never no_peers, which counts against the swarm.
Only a peer's own limits fail it: --peer-timeout (timeout) and --connect-timeout
(connect_failed). When the job's --timeout runs out, the peers still being dialled or
asked are cut off without a peer_failures entry (we stopped waiting; merge does not
penalise them), and the attempt is timeout unless a peer's failure outranks it; one
that had found no peer at all by then is no_peers, as when its lookup ends with none.
A job that had nowhere to look (no DHT node, as with --no-dht or --bootstrap ""
without --dht-state; no --peer; no peers of its own) is local_error, detail "no peer
source: …", which merge holds against no hash (no_peers would back it off); such a
run warns as it starts. So does a run whose DHT node heard from none of the routers or
saved nodes it asked (the network or --bootstrap is down); a job whose lookup then
fails is local_error too (unless its own peers failed it otherwise), and the run ends
partial (exit 3), its last line saying why: its results are written all the same (with
--bootstrap "" and no saved node it asks nobody: exit 0, as a run without a DHT).

With --now TIME (e.g. the --now plan-retries and merge take, to replay or simulate a pass
at another time) the run's clock starts at TIME and advances at the wall clock's pace
(TIME + the real time elapsed): it stamps attempted_at and peer_failures' at, and it
decides when a lease (lease_until) or a penalty of the avoid list has ended. --timeout,
--peer-timeout, --connect-timeout, --deadline and --dht-rate stay in real time.

Jobs whose lease_until has passed are neither started nor released (lease_expired). On
SIGINT/SIGTERM or --deadline, fetch stops starting jobs, abandons those in flight, reads
the rest of its input (for at most 10s) and commits the finished results together with a
row of outcome released for every leased job it read and did not finish (abandoned or
never started). A released row is no attempt and no failure (a made-up failure would
wrongly push back the next retry): it carries the job's info_hash, hash_type, attempt and
lease_id, attempted_at is when the lease was released, detail says why, and it has no
peer data. merge then ends the lease (if it is still the hash's), so that the next
plan-retries plans the hash again at once instead of after lease_until. A job without a
lease (a hash list) gets no row, nor do jobs left unread after those 10s (a stream that
stalls) or dropped by kill -9: their leases run out at lease_until as before. All of
them count as unfinished: in the summary and --stats-json, jobs = attempted +
lease_expired + unfinished, released (part of unfinished) counts the released rows the
output kept (none when the output could not be written: a full disk), and
the outcomes count attempts only; what was left unread is counted from a Parquet input's
footer, or by reading a stream through (for at most another 10s; a warning says if that
fell short). With -o - (or -o naming a FIFO or device), an output blocked for 10s after
the signal (a reader that reads nothing, a FIFO that no reader opens), or a second signal,
ends the run at once (exit 130): the stream is cut short (the leases of the jobs whose rows
did not get through run out at lease_until), and the DHT state is saved all the same.

Results are written as they come, in batches at least once a second: to
a Parquet file, or an Arrow IPC stream on stdout with -o - or into FILE
with -o FILE named *.arrows or *.arrow (any case), written as "-o - >
FILE" writes it (below; a FIFO or device so named, or a link to one, as
-o - is). An -o FILE that exists is refused (exit 2)
unless --replace is given (one a writer holds: exit 75). -o FILE reserves
its disk space (fallocate) a few MiB ahead of the results: when the disk
(or quota, or file size limit) has no more, fetch stops as at a signal
and keeps the results that fit, with a released row for each leased job
left (one whose result did not fit included), exit 3; no room to start:
exit 1, no job attempted. To -o FILE (Parquet) they are readable only
once the file is whole: a kill -9 (or the OOM killer) loses them all, and
their jobs wait for lease_until. With -o FILE.arrows, or -o - redirected
to a file ("-o - > results.arrows", as crawl-pass.sh does), each batch
reaches the file within 1s of its results and the disk (fsync) within 1s
more, so a kill -9 loses at most that (a machine crash, that second too):
merge applies the file up to its last whole batch. Its disk space is
reserved as a Parquet file's, and a full disk ends the stream after the
batches that fit (exit 3); after a kill -9 up to 5 MiB reserved past the
stream's end stay allocated (du counts them) until the file is removed,
replaced (--replace) or emptied ("> FILE"). While it writes, fetch holds
the file's flock(2): dedup and merge skip the file (exit 3) until fetch
is done, and a second writer to it exits 75. With --replace, an existing
FILE.arrows stays as it was until the first batch replaces it (the
stream is written beside it until then): a run refused or killed before
that leaves it.

When done, fetch writes a summary of its counters on stderr: a few lines of text, or with
--log-format json one log record, msg "fetch: done", whose "stats" object holds what
--stats-json writes. Its dials add up: connects = connects_ok + connects_failed (the
peer's: refused, unreachable, silent) + connects_cancelled (we stopped them: another peer
won, the run stopped, the job's --timeout) + connects_local_error (our side: sockets).
Each later stage counts the peers that got through the one before: connects_ok >=
handshakes >= extension_support (a BEP 10 extended handshake that decoded; a peer that
set the BEP 10 bit and sent one that does not decode is extension_bad instead) >=
ut_metadata >= metadata_received >= verified >= v2_claims_refuted. On bad input (exit 2,
nothing written) it prints only the error line; when the reader of -o - went away (exit
141), nothing.

The default --concurrency of 100 with --peers-per-hash 4 keeps about 400 connections
open, which a home router handles; raise both on a server. Metadata pieces received
and not yet verified are bounded over all peers by --metadata-memory (real info
dictionaries are tens of KiB; peers announcing the maximum size and sending garbage
would otherwise hold --max-metadata-size each): a piece past the bound fails that
peer's exchange as local_error, which counts against neither the peer nor the hash.
The exchanges with one host (an IPv4 address, an IPv6 /64) hold at most the larger
of 2 x --max-metadata-size and 1/8 of --metadata-memory, so that one host cannot
starve the others: a piece past that share fails the exchange as rejected, against
that peer (not the hash).

` + exitHelp("fetch"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write results to `FILE` (Parquet; an Arrow IPC stream if named *.arrows or *.arrow) or - (Arrow IPC on stdout); never a terminal"},
			&cli.StringSliceFlag{Name: "peer", Usage: "also try peer `HOST:PORT` for every job (repeatable; tried even while the dataset penalises it; its failures are recorded against it as any peer's)"},
			dhtboot.Flag(),
			&cli.BoolFlag{Name: "no-dht", Usage: "do not look peers up in the DHT (use --peer and the jobs' peers only; --bootstrap \"\" does so too unless a --dht-state has saved nodes)"},
			&cli.StringFlag{Name: "dht-listen", Value: d.DHTListen, Usage: "UDP `ADDR` of fetch's DHT node (on loopback, fetch also dials loopback peers, even with --no-dht)"},
			&cli.StringFlag{Name: "dht-state", Usage: "keep the DHT node's ID and the nodes that answered it in `DIR` between runs and start from them (none unless given; capture's --dht-state DIR may be shared)"},
			&cli.Float64Flag{Name: "dht-rate", Value: d.DHTQueryRate, Usage: "at most `N` DHT queries per second (0: no limit)"},
			&cli.IntFlag{Name: "concurrency", Value: d.Concurrency, Usage: "`N` jobs in flight"},
			&cli.IntFlag{Name: "peers-per-hash", Value: d.PeersPerHash, Usage: "`N` peers tried at once for one job"},
			durationFlag("timeout", d.Timeout, "time budget `D` per job (peers it cuts off are not penalised)"),
			durationFlag("peer-timeout", d.PeerTimeout, "time budget `D` per peer (a peer that exceeds it fails as timeout)"),
			durationFlag("connect-timeout", d.ConnectTimeout, "TCP connect timeout `D`"),
			durationFlag("deadline", 0, "stop starting jobs `D` after fetch starts, DHT bootstrap included (0 = none), and release the leases of those left; exit 3 if some were left"),
			&cli.Int64Flag{Name: "max-metadata-size", Value: d.MaxMetadataSize, Usage: "larger metadata fails as too_large (`BYTES`)"},
			&cli.StringFlag{Name: "encryption", Value: d.Encryption.String(), Usage: "when to speak MSE (message stream encryption) to peers: `POLICY` " +
				strings.Join(fetch.EncryptionNames(), ", ") + " (see below)"},
			&cli.Int64Flag{Name: "metadata-memory", Value: d.MetadataMemory, Usage: "metadata `BYTES` all peers may have sent at once before verification (at least --max-metadata-size)"},
			runningNowFlag("attempted_at, peer_failures' at, when leases and penalties end (timeouts stay real time)"),
			replaceFlag,
			statsJSONFlag(true),
		},
		Action: runFetch,
	}
}

func runFetch(c *cli.Context) error {
	if c.NArg() != 1 {
		return usageError(errors.New("fetch: want one JOBS argument (a Parquet file, a hash list or -)"))
	}
	if err := checkStdin(c, c.Args().Slice()); err != nil {
		return err
	}
	clk, err := parseClock(c)
	if err != nil {
		return err
	}
	o := fetch.DefaultOptions()
	o.Clock = clk
	o.Input, o.Output = c.Args().First(), c.String("output")
	o.Stdin, o.Stdout = c.App.Reader, c.App.Writer
	o.Peers = c.StringSlice("peer")
	if !c.Bool("no-dht") {
		o.Bootstrap, o.DHT = dhtboot.Parse(c.StringSlice("bootstrap")), true
	}
	o.DHTListen, o.DHTQueryRate = c.String("dht-listen"), c.Float64("dht-rate")
	o.DHTState = c.String("dht-state")
	o.Concurrency, o.PeersPerHash = c.Int("concurrency"), c.Int("peers-per-hash")
	o.Timeout, o.PeerTimeout = flagDuration(c, "timeout"), flagDuration(c, "peer-timeout")
	o.ConnectTimeout, o.Deadline = flagDuration(c, "connect-timeout"), flagDuration(c, "deadline")
	o.MaxMetadataSize = c.Int64("max-metadata-size")
	o.MetadataMemory = c.Int64("metadata-memory")
	if o.Encryption, err = fetch.ParseEncryption(c.String("encryption")); err != nil {
		return usageError(fmt.Errorf("fetch: %w", err))
	}
	if c.IsSet("metadata-memory") && o.MetadataMemory >= 0 && o.MetadataMemory < o.MaxMetadataSize {
		// One peer's metadata of the largest size allowed must fit (a
		// negative value is refused as bad input further on).
		slog.Warn("fetch: --metadata-memory is below --max-metadata-size; using --max-metadata-size",
			"metadata_memory", o.MetadataMemory, "max_metadata_size", o.MaxMetadataSize)
	}
	o.Logger = slog.Default()
	var hold *streamHold
	if o.Input != "-" && o.Output != "-" && sameFile(o.Input, o.Output) {
		return usageError(fmt.Errorf("fetch: -o %s is the input %s: the results would replace the jobs", o.Output, o.Input))
	}
	if err := checkDataOutput(c, stageFormat(o.Output)); err != nil {
		return err
	}
	// -o FILE.arrows is "-o -" into FILE (openOutput).
	o.Stdout, o.Output, hold, err = openOutput(c, "fetch", o.Stdout)
	if err != nil {
		return err
	}
	var saver stateSaver
	o.StateSaver = saver.set
	out := c.String("output")
	stats, err := deliverRun(c.Context, "fetch", out, o.Stdout, func(dst output) (st fetch.Stats, err error) {
		err = withInPlace("fetch", out, func(dst output) error {
			o.Stdout, o.OpenOutput = dst.stdout, dst.open
			st, err = fetch.Run(c.Context, o)
			return err
		})(dst)
		return st, err
	})
	if errors.Is(err, errUndelivered) {
		// The run is blocked writing its results (or released rows): the
		// DHT state does not depend on them, and is saved all the same.
		saver.run("fetch")
		return exitcode.With(exitcode.Interrupted,
			fmt.Errorf("%w; the leased jobs whose rows did not get through stay leased until their lease ends", err))
	}
	if herr := hold.close("fetch", err); err == nil || exitcode.Of(err) == exitcode.Partial || exitcode.Of(err) == exitcode.Interrupted {
		// What reached the file is not sure to be on disk: a failure
		// (exit 1) outranks a partial or interrupted run's status.
		if herr != nil {
			err = herr
		}
	}
	if exitcode.Of(err) == exitcode.BrokenPipe {
		// The reader of -o - went away: as for every command, nothing
		// is printed and no report written (run logs how the run ended
		// when logs are JSON).
		return err
	}
	// Bad input (exit 2) commits nothing: its one error line says all,
	// as for every command. A run that stopped early (partial,
	// interrupted, a failed write) keeps its counters.
	if (stats.Jobs > 0 || err == nil) && exitcode.Of(err) != exitcode.Usage {
		if c.String("log-format") == "json" {
			// One record, its counters as --stats-json writes them: no
			// text lines among the JSON ones.
			slog.Info("fetch: done", "stats", stats)
		} else {
			_ = stats.WriteText(c.App.ErrWriter)
		}
		warnAllOutOfReach(stats)
		runErr := err
		err = writeStatsJSON(c, stats, func(jerr error) error {
			switch {
			case jerr == nil:
			case runErr == nil:
				return jerr
			case errors.Is(jerr, errUndelivered): // stopped by a signal: exit 130, saying both
				return exitcode.With(exitcode.Interrupted, fmt.Errorf("%w; and %w", runErr, jerr))
			}
			return runErr
		})
	}
	return err
}

// warnAllOutOfReach says why a run found no peer it could dial when every
// peer it found was out of its reach: the user of a --no-dht run over
// jobs whose peers are on loopback or a LAN otherwise sees only no_peers.
func warnAllOutOfReach(st fetch.Stats) {
	if st.PeersOutOfReach > 0 && st.PeersFound == 0 {
		slog.Warn("fetch: every peer found was out of reach: loopback and private addresses are dialled only "+
			"in a range a --bootstrap or --peer is in (loopback: also --dht-listen there)",
			"peers_out_of_reach", st.PeersOutOfReach)
	}
}

// sameFile reports whether paths a and b name one file: the same cleaned
// absolute path, or (through symbolic or hard links) the same file on
// disk.
func sameFile(a, b string) bool {
	pa, errA := filepath.Abs(a)
	pb, errB := filepath.Abs(b)
	if errA == nil && errB == nil && pa == pb {
		return true
	}
	ia, errA := os.Stat(a)
	ib, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(ia, ib)
}
