package export

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// wholeTables are the tables that are not partitioned by hash: the live
// leases, the penalised peer endpoints and the ledger of applied inputs.
// They are small (a lease per planned job, an entry per input) and are
// exported whole: the row filters, which look at a hash's state, do not
// apply, nor do the formats built for hashes (magnet, es-bulk).
var wholeTables = []string{dataset.TableLeases, dataset.TablePeers, dataset.TableLedger}

// LedgerEntry is a ledger row as export writes it: an input applied to
// the dataset, identified by the checksum of its content.
type LedgerEntry struct {
	ID        string `parquet:"id"`
	Name      string `parquet:"name"`
	Rows      int64  `parquet:"rows"`
	AppliedAt int64  `parquet:"applied_at,timestamp(millisecond)"`
}

// checkWhole refuses what does not apply to a whole table.
func checkWhole(o Options) error {
	if o.Format == "magnet" || o.Format == "es-bulk" {
		return exitcode.BadInput(fmt.Errorf("export: --format %s is for --table state, torrents or catalog, not %s", o.Format, o.Table))
	}
	var given []string
	if len(o.Status) > 0 {
		given = append(given, "--status")
	}
	if len(o.Tiers) > 0 {
		given = append(given, "--tier")
	}
	if !o.Since.IsZero() {
		given = append(given, "--since")
	}
	if !o.FetchedSince.IsZero() {
		given = append(given, "--fetched-since")
	}
	if len(o.Prefixes) > 0 {
		given = append(given, "--prefix")
	}
	if len(given) > 0 {
		return exitcode.BadInput(fmt.Errorf("export: --table %s is exported whole: %s applies only to state, torrents and catalog", o.Table, strings.Join(given, ", ")))
	}
	return nil
}

// writeWholeTable exports one of wholeTables from snapshot m.
func writeWholeTable(ctx context.Context, d *dataset.Dataset, m *dataset.Manifest, o Options) (Stats, error) {
	switch o.Table {
	case dataset.TableLeases:
		rows, err := readWhole[schema.Lease](d, m, o.Table)
		if err != nil {
			return Stats{}, err
		}
		slices.SortStableFunc(rows, func(a, b schema.Lease) int { return bytes.Compare(a.InfoHash[:], b.InfoHash[:]) })
		var st Stats
		kept := rows[:0]
		for _, r := range rows {
			if o.Blocklist != nil && o.Blocklist(r.InfoHash) {
				st.Blocklisted++
				continue
			}
			kept = append(kept, r)
		}
		return writeRows(ctx, o, kept, st, "info_hash")
	case dataset.TablePeers:
		rows, err := readWhole[schema.PeerPenalty](d, m, o.Table)
		if err != nil {
			return Stats{}, err
		}
		slices.SortStableFunc(rows, func(a, b schema.PeerPenalty) int { return strings.Compare(a.Addr, b.Addr) })
		return writeRows(ctx, o, rows, Stats{}, "addr")
	default:
		entries, err := d.LedgerEntries(m)
		if err != nil {
			return Stats{}, fmt.Errorf("export: %w", err)
		}
		rows := make([]LedgerEntry, len(entries))
		for i, e := range entries {
			rows[i] = LedgerEntry{ID: e.ID, Name: e.Name, Rows: e.Rows, AppliedAt: e.At.UnixMilli()}
		}
		return writeRows(ctx, o, rows, Stats{}, "") // oldest first
	}
}

// readWhole reads every row of an unpartitioned table.
func readWhole[T any](d *dataset.Dataset, m *dataset.Manifest, table string) ([]T, error) {
	t := m.Table(table)
	var out []T
	for _, f := range t.Partitions[""] {
		rows, err := dataset.ReadDataFile[T](d, t, "", f)
		if err != nil {
			return nil, fmt.Errorf("export: %s: %w", table, err)
		}
		out = append(out, rows...)
	}
	return out, nil
}

// writeRows writes rows through a sink of o's format, sorted (for
// Parquet's metadata) by column sortedBy ("" for none).
func writeRows[T any](ctx context.Context, o Options, rows []T, st Stats, sortedBy string) (Stats, error) {
	if err := ctx.Err(); err != nil {
		return st, err
	}
	sink, err := newSinkSorted[T](o, sortedBy)
	if err != nil {
		return st, err
	}
	if err := sink.write(rows); err != nil {
		sink.abort()
		return st, fmt.Errorf("export: %s: %w", o.outName(), err)
	}
	if err := sink.finish(o); err != nil {
		return st, err
	}
	st.Rows = int64(len(rows))
	return st, nil
}
