// Package export writes a dataset's tables out for people and other
// tools: Parquet, CSV, JSON Lines, Arrow IPC, magnet links and
// Elasticsearch bulk NDJSON. It reads the latest committed snapshot
// through the manifest, one partition at a time.
//
//	capture → dedup → plan-retries → fetch → merge → export
package export

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/formats/leases"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/internal/progress"
)

// Tables and formats export knows.
var (
	Tables  = []string{"state", "torrents", "catalog", "leases", "peers", "ledger"}
	Formats = []string{"parquet", "csv", "jsonl", "arrow", "magnet", "es-bulk"}
)

// Options configure an export.
type Options struct {
	Data   string
	Table  string
	Format string
	Output string    // file, or "-" for stdout
	Stdout io.Writer // used for "-"
	Status []string  // keep only these metadata statuses
	Tiers  []string  // keep only these tiers (state, catalog)
	Since  time.Time // keep hashes last seen (last_seen) at or after (state, catalog)
	// FetchedSince keeps torrents fetched (fetched_at) at or after it
	// (torrents, catalog: a hash not fetched has no fetched_at).
	FetchedSince time.Time
	Prefixes     []string // keep only these partitions (two hex digits, or one)
	Blocklist    func(schema.Hash) bool
	ES           string // es-bulk index name
	// ProgressTo receives a progress bar (terminal) or periodic log lines.
	ProgressTo io.Writer
	// OpenOutput opens Output when it is a file (nil:
	// fsutil.CreateOutput), so that the caller can watch a FIFO or
	// device that blocks.
	OpenOutput fsutil.Opener

	// placed counts the bytes written where they cannot be taken back
	// (set by Run; see sink).
	placed *int64
	// inPlace is Output opened once when it is written in place (a FIFO
	// or device): a start over writes on in it (see runLatest).
	inPlace *fsutil.File
}

// DefaultOptions returns the defaults.
func DefaultOptions() Options {
	return Options{Table: "state", Format: "parquet", Output: "-", Stdout: os.Stdout, ES: "infohash"}
}

// Stats are export's counters.
type Stats struct {
	Rows        int64 `json:"rows"`
	Filtered    int64 `json:"filtered"`
	Blocklisted int64 `json:"blocklisted"`
	// UnlinkableV2 counts the rows --format magnet left out: of
	// hash_type 2, their full v2 hash unknown, which no magnet can name
	// (see Magnet). Not in Rows.
	UnlinkableV2 int64 `json:"unlinkable_v2"`
	Partitions   int   `json:"partitions"`
}

// Run writes the table.
func Run(ctx context.Context, o Options) (Stats, error) {
	var st Stats
	if !contains(Tables, o.Table) {
		return st, exitcode.BadInput(fmt.Errorf("export: --table %q: want one of %s", o.Table, strings.Join(Tables, ", ")))
	}
	if !contains(Formats, o.Format) {
		return st, exitcode.BadInput(fmt.Errorf("export: --format %q: want one of %s", o.Format, strings.Join(Formats, ", ")))
	}
	if contains(wholeTables, o.Table) {
		if err := checkWhole(o); err != nil {
			return st, err
		}
	}
	if err := checkTimeFilters(o); err != nil {
		return st, err
	}
	for _, p := range o.Prefixes {
		if len(p) < 1 || len(p) > 2 || strings.Trim(strings.ToLower(p), "0123456789abcdef") != "" {
			return st, exitcode.BadInput(fmt.Errorf("export: --prefix %q: want one or two hex digits", p))
		}
	}
	d, err := dataset.OpenReadOnly(o.Data)
	if err != nil {
		return st, err
	}
	defer d.Close()
	return runLatest(ctx, d, o)
}

// exportSnapshot writes the table of snapshot m.
func exportSnapshot(ctx context.Context, d *dataset.Dataset, m *dataset.Manifest, o Options) (Stats, error) {
	if contains(wholeTables, o.Table) {
		return writeWholeTable(ctx, d, m, o)
	}
	switch o.Table {
	case "state":
		ls, err := leases.Read(d, m)
		if err != nil {
			return Stats{}, fmt.Errorf("export: %w", err)
		}
		return write(ctx, d, m, o, stateSource(ls))
	case "torrents":
		return write(ctx, d, m, o, torrentRows)
	default:
		return write(ctx, d, m, o, catalogSource())
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// incomplete is what a failure adds once bytes went where they cannot be
// taken back (stdout, a FIFO, a device): that the output there is
// incomplete ("" before that, and for a file output, never published).
func (o Options) incomplete() string {
	if o.placed == nil || *o.placed == 0 {
		return ""
	}
	return fmt.Sprintf(" (the output on %s is incomplete)", o.outName())
}

// outName is how export's errors name the output: its path, or stdout
// for "-" ("export: -: write /dev/stdout: …" named a dash).
func (o Options) outName() string {
	if o.Output == "-" {
		return "stdout"
	}
	return o.Output
}

// keepPartition applies --prefix.
func (o Options) keepPartition(key string) bool {
	if len(o.Prefixes) == 0 {
		return true
	}
	for _, p := range o.Prefixes {
		if strings.HasPrefix(key, strings.ToLower(p)) {
			return true
		}
	}
	return false
}

// rowSource yields the rows of one partition.
type rowSource[T any] func(d *dataset.Dataset, m *dataset.Manifest, key string) ([]T, error)

// partitionKeys lists the partitions of the table behind a row source.
func partitionKeys(m *dataset.Manifest, table string) []string {
	t := table
	if t == "catalog" {
		t = dataset.TableState
	}
	return m.Table(t).PartitionKeys()
}

func write[T any](ctx context.Context, d *dataset.Dataset, m *dataset.Manifest, o Options, src rowSource[T]) (Stats, error) {
	var st Stats
	sink, err := newSink[T](o)
	if err != nil {
		return st, err
	}
	ok := false
	defer func() {
		if !ok {
			sink.abort()
		}
	}()
	keys := partitionKeys(m, o.Table)
	var ph phases // for --debug
	var prog *progress.Reporter
	if o.ProgressTo != nil {
		prog = progress.NewTicking(o.ProgressTo, "export: partitions", int64(len(keys)))
		defer prog.Done()
	}
	var order []int // sortByHash's, kept for the next partition
	for _, key := range keys {
		prog.Add(1)
		if err := ctx.Err(); err != nil {
			return st, err
		}
		if !o.keepPartition(key) {
			ph.skipped++
			continue
		}
		if testBeforePartition != nil {
			testBeforePartition(key)
		}
		began := time.Now()
		rows, err := src(d, m, key)
		if err != nil {
			return st, fmt.Errorf("export: partition %s: %w%s", key, err, o.incomplete())
		}
		ph.read += time.Since(began)
		ph.rows += int64(len(rows))
		st.Partitions++
		kept := rows[:0]
		for i := range rows {
			f := filterOf(&rows[i])
			if o.Blocklist != nil && o.Blocklist(f.hash) {
				st.Blocklisted++
				continue
			}
			if !o.match(f) {
				st.Filtered++
				continue
			}
			kept = append(kept, rows[i])
		}
		order = sortByHash(kept, order)
		began = time.Now()
		unlinkable := sink.unlinkable
		if err := sink.write(kept); err != nil {
			return st, fmt.Errorf("export: %s: %w", o.outName(), err)
		}
		ph.write += time.Since(began)
		unlinkable = sink.unlinkable - unlinkable
		st.UnlinkableV2 += unlinkable
		st.Rows += int64(len(kept)) - unlinkable
	}
	began := time.Now()
	if err := sink.finish(o); err != nil {
		return st, err
	}
	ph.finish = time.Since(began)
	ok = true
	ph.log(m, o, st)
	return st, nil
}

// filterView is what the filters look at in any table's row.
type filterView struct {
	hash      schema.Hash
	status    string
	tier      string
	lastSeen  int64 // 0 in a torrents row, which has none (--since is refused there)
	fetchedAt int64 // 0 in a state row, and in a catalog row not fetched
}

// checkTimeFilters refuses a time filter on a table without its column:
// --since is last_seen, which torrents lack; --fetched-since is
// fetched_at, which the state lacks. (A torrents --since once filtered on
// fetched_at, unlike the same filter on the catalog.)
func checkTimeFilters(o Options) error {
	switch {
	case !o.Since.IsZero() && o.Table == "torrents":
		return exitcode.BadInput(fmt.Errorf("export: --since keeps hashes by last_seen, which torrents lack: " +
			"use --table catalog --status fetched --since for fetched hashes seen since, or --fetched-since for torrents fetched since"))
	case !o.FetchedSince.IsZero() && o.Table == "state":
		return exitcode.BadInput(fmt.Errorf("export: --fetched-since keeps torrents by fetched_at, which the state lacks: use --table catalog or torrents"))
	}
	return nil
}

// hashOf is a row's info_hash.
func hashOf(row any) *schema.Hash {
	switch r := row.(type) {
	case *schema.State:
		return &r.InfoHash
	case *schema.Catalog:
		return &r.InfoHash
	case *schema.Torrent:
		return &r.InfoHash
	}
	panic("export: unknown row type")
}

func filterOf(row any) filterView {
	switch r := row.(type) {
	case *schema.State:
		return filterView{r.InfoHash, r.MetadataStatus, r.Tier, r.LastSeen, 0}
	case *schema.Catalog:
		return filterView{r.InfoHash, r.MetadataStatus, r.Tier, r.LastSeen, r.FetchedAt}
	case *schema.Torrent:
		return filterView{r.InfoHash, schema.StatusFetched, "", 0, r.FetchedAt}
	}
	panic("export: unknown row type")
}

func (o Options) match(f filterView) bool {
	if len(o.Status) > 0 && !contains(o.Status, f.status) {
		return false
	}
	if len(o.Tiers) > 0 && f.tier != "" && !contains(o.Tiers, f.tier) {
		return false
	}
	if !o.Since.IsZero() && f.lastSeen < ceilMillis(o.Since) {
		return false
	}
	if !o.FetchedSince.IsZero() && (f.fetchedAt == 0 || f.fetchedAt < ceilMillis(o.FetchedSince)) {
		return false
	}
	return true
}

// ceilMillis is the first whole millisecond at or after t, the bound of
// a time filter: the tables hold milliseconds, and t.UnixMilli (rounded
// down) would keep a row up to 1 ms before a TIME given to the
// microsecond (or a duration's, which is the wall clock's, ns), where
// DuckDB's fetched_at >= TIME keeps none.
func ceilMillis(t time.Time) int64 {
	ms := t.UnixMilli()
	if time.UnixMilli(ms).Before(t) {
		ms++
	}
	return ms
}
