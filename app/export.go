package app

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/pipeline/export"
	"github.com/infohash/infohash/pipeline/schedule"
)

func exportCommand() *cli.Command {
	return &cli.Command{
		Name:  "export",
		Usage: "write a table of the dataset as parquet, csv, jsonl, arrow, magnet links or es-bulk",
		UsageText: `infohash export --data DIR [--table state|torrents|catalog|leases|peers|ledger] [--format FORMAT] [filters] [-o FILE|-]

   infohash export --data ./ih --table state --format csv -o state.csv
   infohash export --data ./ih --table catalog --format parquet -o catalog.parquet
   infohash export --data ./ih --table catalog --format es-bulk -o - | awk -v c="curl -s -H 'Content-Type: application/x-ndjson' --data-binary @- localhost:9200/_bulk" '{ print | c } NR % 20000 == 0 { close(c) }'   # 10,000 documents a request (Elasticsearch takes 100 MB at most); any POSIX awk
   infohash export --data ./ih --status failed --since 2026-01-01T00:00:00Z --format magnet -o -
   infohash export --data ./ih --table torrents --fetched-since 1d --format jsonl -o -   # metadata fetched in the last day
   infohash export --data ./ih --table ledger --format csv -o -     # the inputs applied so far, in the order applied (applied_at is each run's --now)
   infohash export --describe torrents                              # a table's columns: type, null or not, meaning; all: every table`,
		Description: `--describe TABLE prints the columns export writes of TABLE (state, torrents,
catalog, leases, peers, ledger, or all): each one's type and nullability
from the schema itself, and what it means; it reads no dataset.

Reads the latest committed snapshot and writes nothing under DIR (no lock
taken; a dataset of an older format is read as it is, not migrated). A
writer may commit meanwhile: when its commit removes the files of the
snapshot being read (they stay for the writers' --keep snapshots), export
starts over on the newer snapshot, up to 5 times, so that the output is one
snapshot; once part of the output has gone to stdout, a FIFO or a device it
cannot, and fails saying so (raise --keep). To stdout, a FIFO or a device
it first checks that each file it will read has the size and footer the
manifest records: a missing or cut-short file fails the run (exit 1, one
line naming it) before the first byte. In text formats (csv, jsonl,
es-bulk, magnet) a hash is 40 (or 64) lowercase hex characters and a
timestamp is RFC 3339 UTC; csv has a header row. Values are written as
they are, never defused: a torrent name from a peer that begins with =, +,
- or @ is a formula to a spreadsheet that opens the csv (import it as
text). arrow is an Arrow IPC
stream (pyarrow: ipc.open_stream), also when -o ends in .arrow. parquet and
arrow carry every column; csv and jsonl leave out info_bytes (the raw info dictionary),
es-bulk info_bytes and name_raw. The state's lease_id and lease_until come
from the leases table (--table leases): the hash's lease, live while
lease_until is in the future (an ended one stays for up to 7 days, until the
hash is planned again or a late result ends it), null when it has none. The
catalog is one row per known hash: the state's columns but lease_id,
lease_until, backoff_step, bad_metadata, reactivated_at, avoid_peers,
peers and peers_at, then the torrent's metadata but info_bytes (null until
fetched).
Sightings keep first_seen and first_source, last_seen and last_source;
failures keep last_failure and last_failure_at; a full v2 hash keeps
info_hash_v2_source (an input's claim, or metadata); metadata keeps
fetched_at and served_by, so a reader can tell a short-lived observation from a lasting
fact. The two time filters follow sightings and metadata: --since keeps hashes last seen
since TIME (last_seen: state and catalog; refused on torrents, which have
none), --fetched-since torrents fetched since TIME (fetched_at: torrents and
catalog, where a hash not fetched is left out). DIR/blocklist (and
--blocklist) always applies: to leases too, which no other filter takes
(peers and ledger have no hash to list). magnet writes a link per hash:
btmh for a v2 hash known in full, btih for a v1 hash, with the torrent's
name (dn) from torrents and catalog (the state has none); a v2 hash known only
by its 20-byte DHT key has no valid link and is left out, counted as
unlinkable_v2 (in the log and --stats-json). A file output appears
atomically when complete; one that exists is refused (exit 2) unless
--replace is given. A FIFO or device is written in place. With -o - or a
FIFO or device, an output blocked for 10s after SIGINT/SIGTERM (a reader
that reads nothing, a FIFO that no reader opens), or a second signal, ends
the run at once (exit 130). Parquet and Arrow are
not written to a terminal (-o - is the default): redirect or pipe them.

` + exitHelp("export"),
		Flags: []cli.Flag{
			dataFlag, statsJSONFlag(false),
			&cli.StringFlag{Name: "table", Value: "state", Usage: "`TABLE` to write: state, torrents, catalog (state joined with metadata: a selection of their columns, see above); or, whole (the hash filters refused; DIR/blocklist and --blocklist leave out leases of listed hashes), leases, peers (penalised endpoints) or ledger (applied inputs)"},
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "parquet", Usage: "output `FORMAT`: " + strings.Join(export.Formats, ", ") + " (not given: the one -o's extension names, .parquet, .csv, .jsonl or .ndjson, .arrow or .arrows; another extension is refused; parquet for -o - or a name without one)"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "-", Usage: "output `FILE`, or - for stdout"},
			&cli.StringSliceFlag{Name: "status", Usage: "keep only hashes whose metadata_status is `STATUS` (new, fetched or failed; repeatable, or comma-separated)"},
			&cli.StringFlag{Name: "since", Usage: "keep only hashes last seen (last_seen) at or after `TIME` (RFC 3339, or a duration such as 24h or 7d meaning that long ago); state and catalog (torrents have no last_seen)"},
			&cli.StringFlag{Name: "fetched-since", Usage: "keep only torrents fetched (fetched_at) at or after `TIME` (as --since); torrents and catalog (leaves out hashes not fetched)"},
			&cli.StringSliceFlag{Name: "prefix", Usage: "keep only partitions starting with the hex digits `HEX` (repeatable, or comma-separated)"},
			&cli.StringSliceFlag{Name: "tier", Usage: "keep only the hashes in `TIER`: hot or cold (state, catalog; repeatable, or comma-separated)"},
			&cli.StringFlag{Name: "blocklist", Usage: "also leave out the hashes listed in `FILE` (lines as DIR/blocklist's: hex, magnet URIs, JSON)"},
			&cli.StringFlag{Name: "es-index", Value: "infohash", Usage: "index `NAME` in es-bulk action lines"},
			replaceFlag,
			&cli.StringFlag{Name: "describe", Usage: "print the columns of `TABLE` (or all) as export writes them: type, null or not, meaning; then exit (reads no dataset)"},
		},
		Action: func(c *cli.Context) error {
			if c.IsSet("describe") {
				return describe(c)
			}
			if c.Args().Present() {
				return usageError(fmt.Errorf("export: unexpected argument %q (the output is -o FILE)", c.Args().First()))
			}
			data, err := requireData(c)
			if err != nil {
				return err
			}
			o := export.DefaultOptions()
			o.Data, o.Table, o.Format, o.Output = data, c.String("table"), c.String("format"), c.String("output")
			o.Stdout, o.Status, o.Prefixes, o.ES = c.App.Writer, c.StringSlice("status"), c.StringSlice("prefix"), c.String("es-index")
			o.Tiers = c.StringSlice("tier")
			// -o x.csv without --format writes CSV, not Parquet named .csv,
			// and -o x.xyz is refused; a --format given wins, with a
			// warning when the name says another.
			if !slices.Contains(export.Formats, o.Format) {
				// Before the warning below, which spoke of writing it.
				return badFlag(c, "--format %q: want one of %s", o.Format, strings.Join(export.Formats, ", "))
			}
			f, err := formatForOutput(o.Output)
			if err != nil && !c.IsSet("format") {
				return badFlag(c, "%w", err)
			}
			if f != "" && f != o.Format {
				if !c.IsSet("format") {
					o.Format = f
				} else {
					slog.Warn(fmt.Sprintf("export: -o %s names a %s file, but --format is %s: writing %s", o.Output, f, o.Format, o.Format))
				}
			}
			if c.IsSet("es-index") && o.Format != "es-bulk" {
				return badFlag(c, "--es-index is for --format es-bulk, not %s", o.Format)
			}
			o.ProgressTo = c.App.ErrWriter
			if outputIsTerminal(c, o.Output) {
				o.ProgressTo = nil // the rows go to the terminal (-o -, or -o /dev/stdout): a bar would cut into them
			}
			if err := checkDataOutput(c, binaryFormats[o.Format]); err != nil {
				return err
			}
			if err := checkNotReplacing(c); err != nil {
				return err
			}
			for _, t := range o.Tiers {
				if t != schema.TierHot && t != schema.TierCold {
					return badFlag(c, "--tier %q: want hot or cold", t)
				}
			}
			if len(o.Tiers) > 0 && o.Table == "torrents" {
				// A torrent row has no tier: filtering would need the state.
				return badFlag(c, "--tier: torrents have no tier; use --table catalog (state joined with metadata)")
			}
			for _, s := range o.Status {
				if s != schema.StatusNew && s != schema.StatusFetched && s != schema.StatusFailed {
					return badFlag(c, "--status %q: want new, fetched or failed", s)
				}
			}
			// Given empty ("--since \"$LAST\"" with LAST unset), a filter
			// was left out in silence: the whole table came out.
			for _, name := range []string{"since", "fetched-since", "blocklist"} {
				if c.IsSet(name) && strings.TrimSpace(c.String(name)) == "" {
					return badFlag(c, "--%s: empty; give a %s, or leave the flag out", name, emptyWant[name])
				}
			}
			if s := c.String("since"); s != "" {
				if o.Since, err = parseSince("--since", s); err != nil {
					return err
				}
			}
			if s := c.String("fetched-since"); s != "" {
				if o.FetchedSince, err = parseSince("--fetched-since", s); err != nil {
					return err
				}
			}
			bl, err := schedule.LoadBlocklist(data)
			if err != nil {
				return exitcode.BadInput(err)
			}
			if p := c.String("blocklist"); p != "" {
				if isTerminalPath(p) { // its read would wait for lines typed
					return badFlag(c, "--blocklist: %s is a terminal: name a file of hashes", p)
				}
				f, err := os.Open(p)
				if err != nil {
					return badFlag(c, "--blocklist: %w", err)
				}
				extra, err := schedule.ParseBlocklist(f, p)
				f.Close()
				if err != nil {
					return exitcode.BadInput(err)
				}
				o.Blocklist = func(h schema.Hash) bool { return bl.Contains(h) || extra.Contains(h) }
			} else if bl.Len() > 0 {
				o.Blocklist = bl.Contains
			}
			st, err := deliverRun(c.Context, "export", o.Output, o.Stdout, func(dst output) (export.Stats, error) {
				o.Stdout, o.OpenOutput = dst.stdout, dst.open
				return export.Run(c.Context, o)
			})
			if errors.Is(err, errUndelivered) {
				return err
			}
			if interrupted(c, err) {
				what := o.Output + " not written"
				if o.Output == "-" {
					what = "the output on stdout is incomplete"
				}
				return exitcode.With(exitcode.Interrupted, fmt.Errorf("export: interrupted; %s", what))
			}
			if err != nil {
				return err
			}
			if st.UnlinkableV2 > 0 {
				slog.Warn("export: v2 hashes left out of the magnet links: their full 32-byte v2 hash is unknown (a link of the 20-byte DHT key would fail a client's check)",
					"unlinkable_v2", st.UnlinkableV2)
			}
			slog.Info("export: done", "table", o.Table, "format", o.Format, "output", o.Output, "rows", st.Rows,
				"filtered", st.Filtered, "blocklisted", st.Blocklisted, "unlinkable_v2", st.UnlinkableV2, secondsAttr(time.Since(started).Seconds()))
			return writeStatsJSON(c, st, func(reportErr error) error { return reportErr })
		},
	}
}

// describe is export --describe TABLE: it prints the table's columns to
// stdout and takes no other export flag (but --data, which
// INFOHASH_DATA may set).
func describe(c *cli.Context) error {
	if c.Args().Present() {
		return usageError(fmt.Errorf("export: unexpected argument %q (--describe takes one TABLE)", c.Args().First()))
	}
	for _, name := range c.LocalFlagNames() {
		if name != "describe" && name != "data" && name != "log-format" && name != "debug" {
			dash := "--"
			if len(name) == 1 {
				dash = "-"
			}
			return badFlag(c, "--describe prints a table's columns and exports nothing: %s%s does not apply", dash, name)
		}
	}
	return printed(c.App.Writer, "export: --describe", func(w io.Writer) error {
		return export.Describe(w, c.String("describe"))
	})
}

// emptyWant is what export's filter flags want, for the error that
// refuses one given empty.
var emptyWant = map[string]string{
	"since":         "TIME (RFC 3339, or a duration such as 24h or 7d)",
	"fetched-since": "TIME (RFC 3339, or a duration such as 24h or 7d)",
	"blocklist":     "FILE of hashes",
}

// esIndexProblem says what makes name, export's --es-index, a name that
// Elasticsearch refuses for an index, alias or data stream alike ("" if
// none): empty; "." or ".."; over 255 bytes; starting with -, _ or +; or
// holding \, /, *, ?, ", |, a space, a comma or #. (Uppercase, refused in
// an index name, is left to it: an alias may hold some; so is a date math
// name, <...>, which it resolves first.) Such a name failed every
// document of the bulk request, each in the response's items, which
// curl -s does not show.
func esIndexProblem(name string) string {
	const refused = "\\/*?\"| ,#"
	switch {
	case strings.TrimSpace(name) == "":
		return "empty; es-bulk action lines need an index name"
	case strings.HasPrefix(name, "<") && strings.HasSuffix(name, ">"):
		return "" // date math (<logs-{now/d}>): Elasticsearch checks the name it resolves to
	case name == "." || name == "..":
		return fmt.Sprintf("%q: Elasticsearch refuses it as an index name", name)
	case len(name) > 255:
		return fmt.Sprintf("%d bytes: Elasticsearch refuses an index name over 255", len(name))
	case strings.ContainsAny(name[:1], "-_+"):
		return fmt.Sprintf("%q: Elasticsearch refuses an index name starting with %s", name, name[:1])
	}
	if i := strings.IndexAny(name, refused); i >= 0 {
		return fmt.Sprintf("%q: Elasticsearch refuses an index name holding %q", name, name[i:i+1])
	}
	return ""
}

// parseSince accepts RFC 3339 or a duration before now, with the units
// of every duration flag (parseFlagDuration: 7d, 2w, 24h), for export's
// flag.
func parseSince(flag, s string) (time.Time, error) {
	if t, err := parseRFC3339(s); err == nil {
		return t, nil
	}
	if d, err := parseFlagDuration(s); err == nil && d > 0 {
		return time.Now().Add(-d), nil
	}
	return time.Time{}, usageError(fmt.Errorf("export: %s: %q: want an RFC 3339 time or a duration such as 24h or 7d", flag, s))
}
