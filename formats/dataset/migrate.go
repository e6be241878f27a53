package dataset

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/infohash/infohash/formats/statecol"
)

// Format history:
//
//	1  state without backoff_step, bad_metadata, reactivated_at
//	2  state without avoid_peers
//	3  the whole ledger of applied inputs in the manifest
//	4  current: the ledger is a table of its own (ledger.go)
//
// migrate rewrites an older dataset's files in the current schema and
// commits the result as a new snapshot; the old snapshot stays readable
// until garbage-collected like any other.
func (d *Dataset) migrate(ctx context.Context, m *Manifest, wait time.Duration) error {
	slog.Info("migrating dataset", "dir", d.Dir, "from", m.FormatVersion, "to", FormatVersion)
	for {
		tx, err := d.Begin()
		if err != nil {
			return err
		}
		if tx.Base().FormatVersion == FormatVersion {
			tx.Abort()
			return nil
		}
		// From format 3 the state's schema is unchanged; the commit
		// itself moves the manifest's ledger into the ledger table.
		if tx.Base().FormatVersion < 3 {
			if err := migrateState(d, tx); err != nil {
				tx.Abort()
				return fmt.Errorf("dataset: %s: migrating: %w", d.Dir, err)
			}
		}
		_, err = tx.Commit(ctx, CommitOptions{LockWait: wait, Writer: fmt.Sprintf("migrate %d→%d", m.FormatVersion, FormatVersion)})
		if ac, ok := AsAfterCommit(err); ok {
			ac.What = fmt.Sprintf("the migration to format %d", FormatVersion)
		}
		if err == nil || !isConflict(err) {
			return err
		}
	}
}

// StateLacks returns the state columns that a state file of snapshot m
// may lack: those m's format version predates (the history above), which
// read as zero values. A state file of format 3 or later has every column
// and one it lacks is damage.
func (m *Manifest) StateLacks() statecol.Columns {
	switch {
	case m.FormatVersion <= 1:
		return statecol.ColumnsNamed("backoff_step", "bad_metadata", "reactivated_at", "avoid_peers")
	case m.FormatVersion == 2:
		return statecol.ColumnsNamed("avoid_peers")
	}
	return 0
}

func migrateState(d *Dataset, tx *Tx) error {
	t := tx.Base().Table(TableState)
	lacks := tx.Base().StateLacks()
	for _, key := range t.PartitionKeys() {
		var infos []FileInfo
		for _, f := range t.Partitions[key] {
			rows, err := statecol.ReadStateFile(d.FilePath(t, key, f), lacks)
			if err != nil {
				return err
			}
			info, err := WriteStaged(tx, TableState, key, rows)
			if err != nil {
				return err
			}
			infos = append(infos, info)
		}
		tx.SetPartition(TableState, key, infos)
	}
	// Bloom filters hold hashes, not columns: they carry over unchanged.
	return nil
}
