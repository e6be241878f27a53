package dataset

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A manifest is the only record of which files make a snapshot, and every
// command trusts what it reads there: a table's directory and file names
// become paths under DIR, its partition keys become prefix=XX folders and
// hash prefixes, its row counts become status's counts. So readManifest
// checks that a manifest has the shape its format's writers give it
// (check) before anyone uses it. What it refuses is damage: a table
// that is null would crash every reader, one whose partitions are gone
// would read as an empty table (status --verify would find nothing
// wrong, and the next commit would publish the loss), a directory of
// "../.." would have readers open files outside DIR.

// partitioned reports whether table name is partitioned by the first
// byte of its keys (partition keys "00".."ff"); the other tables have
// the one partition "".
func partitioned(name string) bool { return name == TableState || name == TableTorrents }

// check reports the first thing in m that no writer of m's format leaves
// in a committed manifest (nil if there is none), in a fixed order:
// tables in tableNames' order, each one's partitions by key, then its
// Bloom filters by key; then the inline ledger and the cursors. Tables of
// other names are left to the caller (parseManifest refuses them).
func (m *Manifest) check() error {
	if m.Snapshot < 0 {
		return fmt.Errorf("snapshot %d", m.Snapshot)
	}
	// A format 4 snapshot other than 0 (which creating a dataset writes)
	// has every table, each with a file: every commit leaves it one
	// (empty.go). Older formats made a table when something first went
	// in it.
	complete := m.FormatVersion >= 4 && m.Snapshot > 0
	for _, name := range tableNames {
		// Format 4 predates that rule for the tables a dataset can
		// leave empty (torrents before the first fetch, leases after a
		// complete pass, peers): a snapshot committed before it lacks
		// them or has them empty, and stays readable. The state and the
		// ledger were never left so once committed.
		complete := complete && (name == TableState || name == TableLedger)
		t, ok := m.Tables[name]
		switch {
		case !ok && complete:
			return fmt.Errorf("table %s is missing", name)
		case !ok:
			continue
		case t == nil:
			return fmt.Errorf("table %s is null", name)
		}
		if err := t.check(name, m.Snapshot, complete, m.FormatVersion >= FooterFormat); err != nil {
			return fmt.Errorf("table %s: %w", name, err)
		}
	}
	if len(m.Applied) > 0 && m.FormatVersion >= 4 {
		// Format 4 keeps the ledger in TableLedger, and every commit
		// moves the entries it applies there (rollLedger) before it
		// publishes: DuckDB's view of the ledger, ledger/current, would
		// miss entries left in the manifest.
		return fmt.Errorf("applied: ledger entries inline (%d), which format 4 keeps in table %s", len(m.Applied), TableLedger)
	}
	// Formats 1-3 kept the ledger inline: an entry without an id, or
	// with a negative row count, was written by no build, and migrating
	// it would write a ledger file that every later read refuses.
	for i, a := range m.Applied {
		switch {
		case a.ID == "":
			return fmt.Errorf("applied: entry %d (%s) has no id", i, excerpt(a.Name))
		case a.Rows < 0:
			return fmt.Errorf("applied: entry %d (%s) has %d rows", i, excerpt(a.Name), a.Rows)
		}
	}
	// The cold sweep's cursor is a state partition: plan-retries never
	// sets another, and one out of range would sweep from where it wraps.
	if c, ok := m.Cursors[CursorColdSweep]; ok && (c < 0 || c > 255) {
		return fmt.Errorf("cursor %s is %d, not a state partition (0-255)", CursorColdSweep, c)
	}
	// From format 8 every manifest names its dataset: one without would
	// draw a new identity at the next commit, and the results of the
	// jobs planned under the old one would be refused as foreign.
	if m.FormatVersion >= IDFormat && !ValidDatasetID(m.DatasetID) {
		return fmt.Errorf("dataset_id %s is not 16 lowercase hex digits", excerpt(m.DatasetID))
	}
	if err := m.checkLineage(); err != nil {
		return err
	}
	if err := m.checkPasses(); err != nil {
		return err
	}
	// Totals only grow from 0: a negative one was written by no build.
	for _, k := range slices.Sorted(maps.Keys(m.Totals)) {
		if v := m.Totals[k]; v < 0 || k == "" {
			return fmt.Errorf("totals: %s is %d (a count never below 0)", excerpt(k), v)
		}
	}
	return nil
}

// check is Manifest.check for table name of snapshot snap (complete: it
// must have a file; footers: its data files have a FooterSum).
func (t *Table) check(name string, snap int64, complete, footers bool) error {
	if err := checkDir(t.Dir, name, snap); err != nil {
		return err
	}
	if t.Partitions == nil {
		return errors.New("no partitions (missing or null)")
	}
	if len(t.Partitions) == 0 && complete {
		return errors.New("no files (a committed table has at least one)")
	}
	for _, key := range slices.Sorted(maps.Keys(t.Partitions)) {
		if err := checkKey(key, name); err != nil {
			return err
		}
		fs := t.Partitions[key]
		if len(fs) == 0 {
			// A commit drops a partition left without files
			// (Tx.SetPartition): an empty or null list is damage.
			return fmt.Errorf("partition %s has no files", excerpt(key))
		}
		seen := make(map[string]bool, len(fs))
		for _, f := range fs {
			if err := checkEntry(f, ".parquet", seen); err != nil {
				return fmt.Errorf("partition %s: %w", excerpt(key), err)
			}
			if err := checkFooter(f, footers); err != nil {
				return fmt.Errorf("partition %s: file %s: %w", excerpt(key), f.Name, err)
			}
		}
	}
	seen := make(map[string]bool, len(t.Blooms)) // all in Dir/_bloom
	for _, key := range slices.Sorted(maps.Keys(t.Blooms)) {
		if err := checkKey(key, name); err != nil {
			return fmt.Errorf("Bloom filter: %w", err)
		}
		if err := checkEntry(t.Blooms[key], ".bloom", seen); err != nil {
			return fmt.Errorf("Bloom filter of partition %s: %w", excerpt(key), err)
		}
		if f := t.Blooms[key]; f.FooterSize != 0 || f.FooterCRC32C != 0 {
			return fmt.Errorf("Bloom filter of partition %s: file %s: a footer checksum (Bloom filters have no footer)", excerpt(key), f.Name)
		}
	}
	return nil
}

// checkDir checks a table's directory: the one a commit builds it in,
// name/v/NNNNNNNNNNNN, of that commit's snapshot (at most snap).
func checkDir(dir, name string, snap int64) error {
	num, ok := strings.CutPrefix(dir, name+"/v/")
	n, err := strconv.ParseInt(num, 10, 64)
	if !ok || err != nil || n < 1 || num != snapshotDir(n) {
		return fmt.Errorf("dir %s is not %s", excerpt(dir), filepath.Join(name, "v", "NNNNNNNNNNNN"))
	}
	if n > snap {
		return fmt.Errorf("dir %s is of snapshot %d, after this one", dir, n)
	}
	return nil
}

// snapshotDir is the name of snapshot n's directory of a table.
func snapshotDir(n int64) string { return fmt.Sprintf("%012d", n) }

// checkKey checks a partition key of table name: two lowercase hex
// digits in a partitioned table, "" in the others.
func checkKey(key, name string) error {
	if !partitioned(name) {
		if key != "" {
			return fmt.Errorf("partition key %s in a table that has only the partition \"\"", excerpt(key))
		}
		return nil
	}
	if len(key) != 2 || !isLowerHex(key[0]) || !isLowerHex(key[1]) {
		return fmt.Errorf("partition key %s is not two lowercase hex digits", excerpt(key))
	}
	return nil
}

func isLowerHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }

// checkEntry checks one file entry: a plain file name of the kind the
// writers make (letters, digits, '-', '_' and '.', not starting with a
// '.', ending in ext: NewName's part-….parquet, schedule's
// cold-part-….parquet), not already in seen, and counts that are not
// negative.
func checkEntry(f FileInfo, ext string, seen map[string]bool) error {
	if !isFileName(f.Name, ext) {
		return fmt.Errorf("file name %s is not a plain name ending in %s", excerpt(f.Name), ext)
	}
	if seen[f.Name] {
		return fmt.Errorf("file %s is listed twice", f.Name)
	}
	seen[f.Name] = true
	switch {
	case f.Rows < 0:
		return fmt.Errorf("file %s: rows %d", f.Name, f.Rows)
	case f.Size < 0:
		return fmt.Errorf("file %s: size %d", f.Name, f.Size)
	case f.Capacity < 0:
		return fmt.Errorf("file %s: capacity %d", f.Name, f.Capacity)
	}
	return nil
}

// checkFooter checks data file f's footer checksum: one that fits in
// the file, which every file of a format that records them (want) has.
// (Older formats' files have none, and the first commit of this build,
// migrating them, records theirs.)
func checkFooter(f FileInfo, want bool) error {
	switch {
	case f.FooterSize == 0 && f.FooterCRC32C == 0 && !want:
		return nil
	case f.FooterSize == 0:
		return errors.New("no footer checksum (footer_size)")
	case f.FooterSize < minFooter || f.FooterSize > f.Size-4:
		// "PAR1", then at least a one-byte FileMetaData, its length and
		// "PAR1" again.
		return fmt.Errorf("footer_size %d in a file of %d bytes", f.FooterSize, f.Size)
	}
	return nil
}

// minFooter is the smallest Parquet footer: an empty FileMetaData (its
// stop byte), its length and the magic.
const minFooter = 1 + 8

// maxFileName is the longest file name most file systems take.
const maxFileName = 255

func isFileName(name, ext string) bool {
	stem, ok := strings.CutSuffix(name, ext)
	if !ok || stem == "" || stem[0] == '.' || len(name) > maxFileName {
		return false
	}
	for _, c := range []byte(stem) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}

// checkLineage checks what format 9 adds: the folder every commit
// records, and ancestors NewDatasetID drew, each once, none the
// dataset's own id.
func (m *Manifest) checkLineage() error {
	if m.FormatVersion >= FolderFormat && m.Folder == nil {
		return errors.New("no folder (every commit of format 9 records it)")
	}
	if len(m.AncestorIDs) > MaxAncestors {
		return fmt.Errorf("ancestor_ids: %d, more than %d", len(m.AncestorIDs), MaxAncestors)
	}
	for i, id := range m.AncestorIDs {
		switch {
		case !ValidDatasetID(id):
			return fmt.Errorf("ancestor_ids[%d] %s is not 16 lowercase hex digits", i, excerpt(id))
		case id == m.DatasetID:
			return fmt.Errorf("ancestor_ids[%d] %s is the dataset's own id", i, id)
		case slices.Contains(m.AncestorIDs[:i], id):
			return fmt.Errorf("ancestor_ids[%d] %s is named twice", i, id)
		}
	}
	return nil
}
