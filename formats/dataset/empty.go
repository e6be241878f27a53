package dataset

import (
	"fmt"

	"github.com/infohash/infohash/formats/schema"
)

// Every table of a committed snapshot has at least one file, so that the
// globs analysts use (DIR/leases/current/*.parquet, the state's
// DIR/state/current/prefix=*/*.parquet) match something and DuckDB reads
// an empty table as 0 rows with its columns, not as "No files found". A
// commit that leaves a table without files gives it one 0-row Parquet
// file with the table's full schema; a commit that puts rows into a table
// drops its 0-row files. The file is an ordinary data file of the
// manifest (its size, CRC-32C and 0 rows recorded, checked by status
// --verify). Snapshot 0, which creating a dataset commits, has no tables:
// nothing has been committed to it yet.

// emptyTable is how one table's 0-row file is written: into which
// partition, with which row type.
type emptyTable struct {
	name string
	// key is the partition the file goes in: a partitioned table's is
	// "00", so that the file lies in DIR/TABLE/current/prefix=00/ where
	// hive_partitioning reads a prefix column (it holds no row whose
	// first byte could disagree).
	key   string
	write func(tx *Tx, table, key string) (FileInfo, error)
}

func writeEmpty[T any](tx *Tx, table, key string) (FileInfo, error) {
	return WriteStaged[T](tx, table, key, nil)
}

// emptyTables lists every table, in tableNames' order.
var emptyTables = []emptyTable{
	{TableState, "00", writeEmpty[schema.State]},
	{TableTorrents, "00", writeEmpty[schema.Torrent]},
	{TablePeers, "", writeEmpty[schema.PeerPenalty]},
	{TableLeases, "", writeEmpty[schema.Lease]},
	{TableLedger, "", writeEmpty[ledgerRow]},
}

// fillEmptyTables gives every table of the next snapshot that has no file
// a 0-row one, and drops the 0-row files of a table this transaction
// changed that now has rows.
func (tx *Tx) fillEmptyTables() error {
	for _, e := range emptyTables {
		t := tx.next.Tables[e.name]
		var files, withRows int // files, and how many of them hold rows
		if t != nil {
			for _, fs := range t.Partitions {
				files += len(fs)
				for _, f := range fs {
					if f.Rows > 0 {
						withRows++
					}
				}
			}
		}
		switch {
		case files == 0:
			fi, err := e.write(tx, e.name, e.key)
			if err != nil {
				return fmt.Errorf("dataset: table %s: writing its 0-row file: %w", e.name, err)
			}
			tx.SetPartition(e.name, e.key, []FileInfo{fi})
		case withRows > 0 && withRows < files && tx.dirty[e.name]:
			for key, fs := range t.Partitions {
				kept := make([]FileInfo, 0, len(fs))
				for _, f := range fs {
					if f.Rows > 0 {
						kept = append(kept, f)
					}
				}
				if len(kept) < len(fs) {
					tx.SetPartition(e.name, key, kept)
				}
			}
		}
	}
	return nil
}
