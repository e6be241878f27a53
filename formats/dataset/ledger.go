package dataset

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
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
// manifest's Applied is empty, except in format 3.

// TableLedger holds the ledger (unpartitioned).
const TableLedger = "ledger"

// ledgerRow is one ledger entry in a ledger file.
type ledgerRow struct {
	ID   string `parquet:"id"`
	Name string `parquet:"name"`
	Rows int64  `parquet:"rows"`
	At   int64  `parquet:"applied_at,timestamp(millisecond)"`
}

// ledgerID is a ledger file's id column.
type ledgerID struct {
	ID string `parquet:"id"`
}

// Ledger is the set of inputs one snapshot has applied.
type Ledger struct {
	files  map[string]struct{} // ids in the ledger files (shared: read only)
	inline map[string]struct{} // ids in the manifest
}

// Has reports whether input id was applied.
func (l *Ledger) Has(id string) bool {
	if _, ok := l.inline[id]; ok {
		return true
	}
	_, ok := l.files[id]
	return ok
}

// Len is the number of inputs applied.
func (l *Ledger) Len() int { return len(l.files) + len(l.inline) }

// LedgerLen is the number of entries in m's ledger, from the manifest
// alone.
func (m *Manifest) LedgerLen() int64 {
	return int64(len(m.Applied)) + m.Table(TableLedger).Rows()
}

// Ledger reads snapshot m's ledger: its files and the manifest's newest
// entries. The files' ids are read once per process (a run asks for the
// ledger of the same snapshot several times, and ledger files never
// change).
func (d *Dataset) Ledger(m *Manifest) (*Ledger, error) {
	l := &Ledger{inline: make(map[string]struct{}, len(m.Applied))}
	for _, a := range m.Applied {
		l.inline[a.ID] = struct{}{}
	}
	t := m.Table(TableLedger)
	var key strings.Builder
	key.WriteString(d.Dir)
	for _, f := range t.Partitions[""] {
		fmt.Fprintf(&key, "\x00%s/%s", t.Dir, f.Name)
	}
	ledgerCache.Lock()
	defer ledgerCache.Unlock()
	if ledgerCache.key == key.String() {
		l.files = ledgerCache.ids
		return l, nil
	}
	ids := make(map[string]struct{}, t.Rows())
	for _, f := range t.Partitions[""] {
		rows, err := readLedgerFile[ledgerID](d, t, f) // the id column alone
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			ids[r.ID] = struct{}{}
		}
	}
	ledgerCache.key, ledgerCache.ids = key.String(), ids
	l.files = ids
	return l, nil
}

// ledgerCache holds the ids of the ledger files read last.
var ledgerCache struct {
	sync.Mutex
	key string
	ids map[string]struct{}
}

// LedgerEntries returns every entry of m's ledger, oldest first. Times
// from the ledger files have millisecond precision.
func (d *Dataset) LedgerEntries(m *Manifest) ([]Applied, error) {
	out := make([]Applied, 0, m.LedgerLen())
	t := m.Table(TableLedger)
	for _, f := range t.Partitions[""] {
		rows, err := readLedgerFile[ledgerRow](d, t, f)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			out = append(out, Applied{ID: r.ID, Name: r.Name, Rows: r.Rows, At: time.UnixMilli(r.At).UTC()})
		}
	}
	return append(out, m.Applied...), nil
}

// readLedgerFile reads ledger file f of t (T: ledgerRow, or ledgerID for
// the id column alone). The file must be the one the manifest describes
// (size and CRC-32C, checked before it is parsed: a ledger read wrong
// would apply inputs twice) and hold its entries, each with an id (a file
// without the column reads as empty ids).
func readLedgerFile[T interface{ ledgerRow | ledgerID }](d *Dataset, t *Table, f FileInfo) ([]T, error) {
	p := d.FilePath(t, "", f)
	fh, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("dataset: ledger: %w", err)
	}
	defer fh.Close()
	// Checked through a small buffer, then parsed from the file: reading
	// it whole into memory first cost more than reading it twice.
	n, crc, err := crcOf(fh, make([]byte, 64<<10))
	switch {
	case err != nil:
		return nil, fmt.Errorf("dataset: ledger: %s: %w", p, err)
	case n != f.Size:
		return nil, fmt.Errorf("dataset: ledger: %s: %d bytes, the manifest says %d", p, n, f.Size)
	case crc != f.CRC32C:
		return nil, fmt.Errorf("dataset: ledger: %s: CRC-32C %08x, the manifest says %08x (the content changed)", p, crc, f.CRC32C)
	}
	rows, err := readRows[T](fh, n, p)
	if err != nil {
		return nil, fmt.Errorf("dataset: ledger: %w", err)
	}
	if int64(len(rows)) != f.Rows {
		return nil, fmt.Errorf("dataset: ledger: %s: %d entries, the manifest says %d", p, len(rows), f.Rows)
	}
	for i := range rows {
		if idOf(rows[i]) == "" {
			return nil, fmt.Errorf("dataset: ledger: %s: entry %d has no id", p, i)
		}
	}
	return rows, nil
}

func idOf[T interface{ ledgerRow | ledgerID }](r T) string {
	switch r := any(r).(type) {
	case ledgerRow:
		return r.ID
	case ledgerID:
		return r.ID
	}
	return ""
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
		old, err := readLedgerFile[ledgerRow](tx.d, t, files[len(files)-1])
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
