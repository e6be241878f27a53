package dataset

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/statecol"
)

// Format history:
//
//	1  state without backoff_step, bad_metadata, reactivated_at
//	2  state without avoid_peers
//	3  the whole ledger of applied inputs in the manifest
//	4  the ledger is a table of its own (ledger.go)
//	5  the manifest records every data file's footer checksum
//	   (FileInfo.Footer), which readers check before trusting a footer
//	6  the state has peers (announced endpoints)
//	7  the manifest keeps cumulative totals (Manifest.Totals);
//	   migrating from 6 rewrites no file, and records when the
//	   totals began (CursorTotalsSince)
//	8  the manifest names its dataset (Manifest.DatasetID), drawn by
//	   the commit that migrates from 7, which rewrites no file
//	9  the manifest names the folder it was committed in and the
//	   dataset's ancestors (identify.go), which a copy's first commit
//	   sets; migrating from 8 rewrites no file and keeps the id
//	10 the state has first_source and last_failure_at (provenance of
//	   first_seen and last_failure); migrating rewrites the state's
//	   files (their rows read both as null: unknown)
//	11 a copy's manifest records, per ancestor, the passes of its jobs
//	   the copy held leases of (Manifest.AncestorPasses), set by the
//	   copy's first commit; migrating from 10 rewrites no file and
//	   records none (an older copy takes all its ancestors' jobs)
//	12 current: the state has peers_at and info_hash_v2_source
//	   (provenance of peers and info_hash_v2), and is
//	   repaired of what fetch's old check of a v2 claim did
//	   (RepairV2Claim); migrating rewrites the state's files (the new
//	   columns read as null: unknown)
//
// migrate rewrites an older dataset's files in the current schema and
// commits the result as a new snapshot; the old snapshot stays readable
// until garbage-collected like any other.
func (d *Dataset) migrate(ctx context.Context, m *Manifest, o OpenOptions) error {
	slog.Info("migrating dataset", "dir", d.Dir, "from", m.FormatVersion, "to", FormatVersion)
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	for {
		// A copy's first commit gives it its own id (Begin: asIdentified),
		// told here from the snapshot before it (Migrated.Identified).
		cur, err := d.Current()
		if err != nil {
			return err
		}
		copied := d.Copied(cur)
		tx, err := d.Begin()
		if err != nil {
			return err
		}
		if tx.Base().FormatVersion == FormatVersion {
			tx.Abort()
			return nil
		}
		// Formats 3 to 5 share the state's schema (less peers), 6 to 9
		// too (less first_source and last_failure_at); the commit
		// itself moves format 3's ledger into the ledger table. Every
		// state file of a snapshot has every column (DuckDB's glob reads
		// one schema), so the state's files are rewritten; before
		// RepairFormat, with their rows repaired.
		repaired, rewrite := 0, tx.Base().FormatVersion < RepairFormat // after ProvenanceFormat
		if rewrite {
			if repaired, err = migrateState(d, tx, schema.Millis(now)); err != nil {
				tx.Abort()
				return fmt.Errorf("dataset: %s: migrating: %w", d.Dir, err)
			}
		}
		if tx.Base().FormatVersion < TotalsFormat {
			tx.SetCursor(CursorTotalsSince, schema.Millis(now))
		}
		if err := recordFooters(d, tx); err != nil {
			tx.Abort()
			return fmt.Errorf("dataset: %s: migrating: recording the footer checksums: %w", d.Dir, err)
		}
		mm, err := tx.Commit(ctx, CommitOptions{LockWait: o.LockWait, Keep: o.Keep,
			Writer: fmt.Sprintf("migrate %d→%d", m.FormatVersion, FormatVersion)})
		if _, committed := AsAfterCommit(err); err == nil || committed {
			d.migrated = &Migrated{Dir: d.Dir, From: tx.Base().FormatVersion, Snapshot: mm.Snapshot, Identified: copied}
		}
		if ac, ok := AsAfterCommit(err); ok {
			ac.What = fmt.Sprintf("the migration to format %d", FormatVersion)
		}
		if _, committed := AsAfterCommit(err); rewrite && (err == nil || committed) {
			slog.Info("migration: repaired the state rows of hashes fetch's old check of a v2 claim failed "+
				"(bad_metadata 0, avoid_peers cleared, due at the run's clock)", "dir", d.Dir, "rows", repaired,
				"now", now.UTC().Format(time.RFC3339Nano))
		}
		if err == nil || !isConflict(err) {
			return err
		}
	}
}

// StateLacks returns the state columns that a state file of snapshot m
// may lack: those m's format version predates (the history above), which
// read as zero values. A state file of RepairFormat or later has every column
// and one it lacks is damage. Readers get them, by name, in the
// rowio.DataFile of a state file (Dataset.DataFile).
func (m *Manifest) StateLacks() statecol.Columns {
	provenance := statecol.ColumnsNamed("first_source", "last_failure_at", "peers_at", "info_hash_v2_source")
	switch {
	case m.FormatVersion <= 1:
		return provenance | statecol.ColumnsNamed("backoff_step", "bad_metadata", "reactivated_at", "avoid_peers", "peers")
	case m.FormatVersion == 2:
		return provenance | statecol.ColumnsNamed("avoid_peers", "peers")
	case m.FormatVersion < 6:
		return provenance | statecol.ColumnsNamed("peers")
	case m.FormatVersion < ProvenanceFormat:
		return provenance
	case m.FormatVersion < RepairFormat:
		return statecol.ColumnsNamed("peers_at", "info_hash_v2_source")
	}
	return 0
}

// migrateState rewrites every state file of tx's base in the current
// schema, each under a new name of the same kind (a cold file stays
// cold: migratedName), and, from a base before RepairFormat, repairs its
// rows (RepairV2Claim, at now). A cold row the repair made hot leaves
// its cold file (which plan-retries reads only in its cold sweep) for a
// new hot file of the partition. It returns the rows repaired.
func migrateState(d *Dataset, tx *Tx, now int64) (repaired int, err error) {
	base := tx.Base()
	t := base.Table(TableState)
	for _, key := range t.PartitionKeys() {
		var infos []FileInfo
		var rewarmed []schema.State // repaired rows of cold files: hot again
		for _, f := range t.Partitions[key] {
			rows, err := statecol.ReadStateFile(d.SourceFile(base, TableState, key, f))
			if err != nil {
				return repaired, err
			}
			if base.FormatVersion < RepairFormat {
				cold, kept := strings.HasPrefix(f.Name, ColdPrefix), rows[:0]
				for i := range rows {
					if RepairV2Claim(&rows[i], now) {
						repaired++
					}
					if cold && v2ClaimVictim(&rows[i]) {
						rewarmed = append(rewarmed, rows[i])
						continue
					}
					kept = append(kept, rows[i])
				}
				if rows = kept; len(rows) == 0 {
					continue // all of it hot again
				}
			}
			info, err := WriteStagedAs(tx, TableState, key, migratedName(f.Name), rows)
			if err != nil {
				return repaired, err
			}
			infos = append(infos, info)
		}
		if len(rewarmed) > 0 {
			slices.SortFunc(rewarmed, func(a, b schema.State) int { return bytes.Compare(a.InfoHash[:], b.InfoHash[:]) })
			info, err := WriteStagedAs(tx, TableState, key, NewName(".parquet"), rewarmed)
			if err != nil {
				return repaired, err
			}
			infos = append(infos, info)
		}
		tx.SetPartition(TableState, key, infos)
	}
	// Bloom filters hold hashes, not columns: they carry over unchanged.
	return repaired, nil
}

// migratedName is a new name for a data file name rewritten by a
// migration: fresh (NewName), after what name had before its own
// "part-", which tells the file's kind (schedule's cold-part-…: a cold
// file renamed part-… would be read by every plan as a hot one).
func migratedName(name string) string {
	kind, _, ok := strings.Cut(name, "part-")
	if !ok || !isFileName(kind+"part-x.parquet", ".parquet") {
		kind = ""
	}
	return kind + NewName(".parquet")
}

// recordFooters records the FooterSum of every data file of the next
// snapshot that has none: the files of a base of a format before
// FooterFormat that the migration carries over, each summed from its
// tail (its last 8 bytes, then its footer: never the whole file, so that
// migrating costs about what opening every file once does). The files
// stay where they are: a table the migration did not touch keeps its
// directory. What a footer says now is what is recorded: status --verify,
// before or after, checks each whole file against its CRC-32C.
func recordFooters(d *Dataset, tx *Tx) error {
	for _, name := range slices.Sorted(maps.Keys(tx.next.Tables)) {
		t, base := tx.next.Tables[name], tx.base.Table(name)
		for _, key := range t.PartitionKeys() {
			fs := t.Partitions[key] // the transaction's copy (clone)
			for i := range fs {
				if fs[i].Footer().Recorded() {
					continue // staged by this transaction
				}
				p := d.FilePath(base, key, fs[i])
				if err := checkSize(p, fs[i]); err != nil {
					return err
				}
				if err := fs[i].sumFooter(p); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
