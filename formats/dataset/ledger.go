package dataset

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/statecol"
)

// The ledger lists the inputs a dataset has applied, by content checksum,
// so that applying one again is a no-op. A cron pass adds one or a few
// entries; a year of passes adds hundreds of thousands. Kept whole in the
// manifest (format 3), 200k entries made a 32 MB manifest that every
// commit rewrote and every open parsed. Since format 4 the ledger is a
// table, TableLedger: each commit that applies inputs moves their entries
// (Manifest.Applied while the transaction runs) into a file of it, which
// is published like any table's (checksummed, linked into each snapshot)
// and DuckDB reads whole at DIR/ledger/current/*.parquet. A committed
// manifest's Applied is empty, except in format 3. An entry's id is the
// applying stage's checksum of the input (32 or 64 hex digits, by stage:
// see Applied).

// TableLedger holds the ledger (unpartitioned).
const TableLedger = "ledger"

// ledgerRow is one ledger entry in a ledger file.
type ledgerRow struct {
	ID   string `parquet:"id"`
	Name string `parquet:"name"`
	Rows int64  `parquet:"rows"`
	At   int64  `parquet:"applied_at,timestamp(millisecond)"`
}

// ledgerSchema is a ledger file's schema, as WriteStaged writes ledgerRow.
var ledgerSchema = sync.OnceValue(func() *parquet.Schema { return parquet.SchemaOf(ledgerRow{}) })

// LedgerLen is the number of entries in m's ledger, from the manifest
// alone.
func (m *Manifest) LedgerLen() int64 {
	return int64(len(m.Applied)) + m.Table(TableLedger).Rows()
}

// AppliedAmong returns which of ids snapshot m's ledger holds. It scans
// the ledger files' id column without keeping it: a run asks about a few
// inputs, and a year-old ledger holds hundreds of thousands.
func (d *Dataset) AppliedAmong(m *Manifest, ids []string) (map[string]bool, error) {
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = false
	}
	for _, a := range m.Applied {
		if _, ok := want[a.ID]; ok {
			want[a.ID] = true
		}
	}
	t := m.Table(TableLedger)
	for _, f := range t.Partitions[""] {
		err := scanLedgerIDs(d, t, f, func(id []byte) {
			if _, ok := want[string(id)]; ok {
				want[string(id)] = true
			}
		})
		if err != nil {
			return nil, err
		}
	}
	found := make(map[string]bool, len(ids))
	for id, ok := range want {
		if ok {
			found[id] = true
		}
	}
	return found, nil
}

// LastApplied returns the newest entry of m's ledger (nil if it is
// empty). It reads the newest ledger file, the smallest but after a merge
// of them all.
func (d *Dataset) LastApplied(m *Manifest) (*Applied, error) {
	if n := len(m.Applied); n > 0 {
		a := m.Applied[n-1]
		return &a, nil
	}
	t := m.Table(TableLedger)
	files := t.Partitions[""]
	if len(files) == 0 {
		return nil, nil
	}
	rows, err := readLedgerFile(d, t, files[len(files)-1])
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	r := rows[len(rows)-1]
	return &Applied{ID: r.ID, Name: r.Name, Rows: r.Rows, At: time.UnixMilli(r.At).UTC()}, nil
}

// LedgerEntries returns every entry of m's ledger, oldest first. Times
// from the ledger files have millisecond precision.
func (d *Dataset) LedgerEntries(m *Manifest) ([]Applied, error) {
	out := make([]Applied, 0, m.LedgerLen())
	t := m.Table(TableLedger)
	for _, f := range t.Partitions[""] {
		rows, err := readLedgerFile(d, t, f)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			out = append(out, Applied{ID: r.ID, Name: r.Name, Rows: r.Rows, At: time.UnixMilli(r.At).UTC()})
		}
	}
	return append(out, m.Applied...), nil
}

// openLedgerFile opens ledger file f of t, checked against what the
// manifest says of it (size and CRC-32C, before anything parses it: a
// ledger read wrong would apply inputs twice; and its entry count).
func openLedgerFile(d *Dataset, t *Table, f FileInfo) (*os.File, *parquet.File, error) {
	p := d.FilePath(t, "", f)
	fh, err := os.Open(p)
	if err != nil {
		return nil, nil, fmt.Errorf("dataset: ledger: %w", err)
	}
	// Checked through a small buffer, then parsed from the file: reading
	// it whole into memory first cost more than reading it twice.
	n, crc, err := crcOf(fh, make([]byte, 64<<10))
	switch {
	case err != nil:
		err = fmt.Errorf("dataset: ledger: %s: %w", p, err)
	case n != f.Size:
		err = fmt.Errorf("dataset: ledger: %s: %d bytes, the manifest says %d", p, n, f.Size)
	case crc != f.CRC32C:
		err = fmt.Errorf("dataset: ledger: %s: CRC-32C %08x, the manifest says %08x (the content changed)", p, crc, f.CRC32C)
	}
	var pf *parquet.File
	if err == nil {
		// Through rowio's checks, as readRows opens the other tables:
		// the CRC-32C catches damage on disk, not a crafted file of
		// another dataset (merge --from) whose manifest matches it.
		if pf, err = rowio.OpenParquet(fh, n, ledgerSchema(), rowio.DefaultLimits()); err != nil {
			err = fmt.Errorf("dataset: ledger: %s: %w", p, err)
		} else if pf.NumRows() != f.Rows {
			err = fmt.Errorf("dataset: ledger: %s: %d entries, the manifest says %d", p, pf.NumRows(), f.Rows)
		}
	}
	if err != nil {
		fh.Close()
		return nil, nil, err
	}
	return fh, pf, nil
}

// readLedgerFile reads every entry of ledger file f of t.
func readLedgerFile(d *Dataset, t *Table, f FileInfo) ([]ledgerRow, error) {
	fh, pf, err := openLedgerFile(d, t, f)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	rows, err := readParquet[ledgerRow](pf, fh.Name())
	if err != nil {
		return nil, fmt.Errorf("dataset: ledger: %w", err)
	}
	for i := range rows {
		if rows[i].ID == "" { // a file without the column reads as empty ids
			return nil, fmt.Errorf("dataset: ledger: %s: entry %d has no id", fh.Name(), i)
		}
		// An entry written before AddApplied escaped names: read as it
		// writes them now, and so rewritten when its file is rolled.
		rows[i].Name = schema.EscapeInvalidUTF8(rows[i].Name)
	}
	return rows, nil
}

// scanLedgerIDs calls fn with the id of every entry of ledger file f of
// t, read page by page from the id column (fn must not keep the slice).
func scanLedgerIDs(d *Dataset, t *Table, f FileInfo, fn func(id []byte)) error {
	fh, pf, err := openLedgerFile(d, t, f)
	if err != nil {
		return err
	}
	defer fh.Close()
	col, ok := pf.Schema().Lookup("id")
	if !ok {
		return fmt.Errorf("dataset: ledger: %s: no id column", fh.Name())
	}
	var n int64
	vals := make([]parquet.Value, 1024)
	for _, rg := range pf.RowGroups() {
		err := statecol.EachPage(rg.ColumnChunks()[col.ColumnIndex], func(pg parquet.Page) error {
			vr := pg.Values()
			for {
				k, err := vr.ReadValues(vals)
				for _, v := range vals[:k] {
					if v.IsNull() || len(v.ByteArray()) == 0 {
						return fmt.Errorf("entry %d has no id", n)
					}
					fn(v.ByteArray())
					n++
				}
				if errors.Is(err, io.EOF) {
					return nil
				}
				if err != nil {
					return err
				}
			}
		})
		if err != nil {
			return fmt.Errorf("dataset: ledger: %s: %w", fh.Name(), err)
		}
	}
	if n != f.Rows {
		return fmt.Errorf("dataset: ledger: %s: %d ids, the manifest says %d entries", fh.Name(), n, f.Rows)
	}
	return nil
}

// rollLedger moves the manifest's entries into a new ledger file. The
// new file absorbs the newest existing files while they are at most twice
// its size, so the ledger stays a few files (O(log n)) and an entry is
// rewritten O(log n) times over the dataset's life.
func (tx *Tx) rollLedger() error {
	if len(tx.next.Applied) == 0 {
		return nil
	}
	t := tx.table(TableLedger)
	files := t.Partitions[""]
	var rows []ledgerRow
	for _, a := range tx.next.Applied {
		rows = append(rows, ledgerRow{ID: a.ID, Name: a.Name, Rows: a.Rows, At: a.At.UnixMilli()})
	}
	for len(files) > 0 && files[len(files)-1].Rows <= 2*int64(len(rows)) {
		old, err := readLedgerFile(tx.d, t, files[len(files)-1])
		if err != nil {
			return err
		}
		rows = append(old, rows...)
		files = files[:len(files)-1]
	}
	info, err := WriteStaged(tx, TableLedger, "", rows)
	if err != nil {
		return fmt.Errorf("dataset: ledger: %w", err)
	}
	tx.SetPartition(TableLedger, "", append(files, info))
	tx.next.Applied = nil
	return nil
}
