package dataset

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/formats/rowio"
)

// FormatVersion is the dataset format this build writes. Older datasets
// are migrated on open (see migrate.go).
const FormatVersion = 12

// ProvenanceFormat is the first format whose state files have
// first_source and last_failure_at (older ones are rewritten by the
// migration).
const ProvenanceFormat = 10

// RepairFormat is the first format whose state files have peers_at and
// info_hash_v2_source and are free of the damage fetch's old v2 check did
// (RepairV2Claim): the migration from an older one rewrites the state's
// files, repairing its victims.
const RepairFormat = 12

// FooterFormat is the first format whose manifests record every data
// file's FooterSum (FileInfo.Footer).
const FooterFormat = 5

// Table names.
const (
	TableState    = "state"
	TableTorrents = "torrents"
	TablePeers    = "peers"
	TableLeases   = "leases"
)

// Manifest describes one committed snapshot of the whole dataset.
type Manifest struct {
	FormatVersion int               `json:"format_version"`
	Snapshot      int64             `json:"snapshot"`
	CreatedAt     time.Time         `json:"created_at"`
	Writer        string            `json:"writer,omitempty"` // command that committed it
	Tables        map[string]*Table `json:"tables"`
	Applied       []Applied         `json:"applied,omitempty"` // entries for the ledger: a transaction's, which Commit moves into TableLedger (format 3: the whole ledger)
	Policy        json.RawMessage   `json:"policy,omitempty"`
	// Cursors are small positions that stages keep in the dataset and
	// move in their own commits, so that a crash or a lost race never
	// moves one without the work it stands for (plan-retries' cold sweep:
	// CursorColdSweep). Each commit carries them over unchanged unless
	// its transaction sets them (Tx.SetCursor).
	Cursors map[string]int64 `json:"cursors,omitempty"`
	// Totals are cumulative counts of the work the dataset's commits
	// applied, by name (TotalDedupObservations...): each commit adds its
	// own work to its base's, so a run that fails or is killed before its
	// commit point adds nothing, and an input the ledger holds adds
	// nothing again. They only grow (format 7; older datasets start at 0
	// when migrated), which makes them Prometheus counters (status
	// --metrics-file).
	Totals map[string]int64 `json:"totals,omitempty"`
	// DatasetID names the dataset, not the snapshot: 16 lowercase hex
	// digits drawn at random when the dataset is made (or migrated from
	// format 7), then carried by every commit (format 8). plan-retries
	// puts it in its lease IDs, so that merge can refuse the results of
	// another dataset's jobs (see leases.Dataset). A copy of DIR keeps it
	// until its first writer commits (format 9: identify).
	DatasetID string `json:"dataset_id,omitempty"`
	// Folder is the folder DIR the snapshot was committed in (format 9):
	// a writer that finds DIR another is in a copy (Copied).
	Folder *FolderID `json:"folder,omitempty"`
	// AncestorIDs are the ids the dataset had before copies gave it new
	// ones, newest first, at most MaxAncestors (format 9): merge takes the
	// results of jobs planned under them, before the copy (Descends).
	AncestorIDs []string `json:"ancestor_ids,omitempty"`
	// AncestorPasses holds, for an ancestor of AncestorIDs, the passes
	// (plan-retries runs: leases.ID) of its jobs that the dataset held
	// leases of when it was copied from it, sorted (format 11): merge
	// takes that ancestor's jobs of these passes only, and refuses those
	// it planned after the copy as another dataset's. An
	// ancestor without an entry (named by a copy made before format 11,
	// or one whose leases were of more than MaxAncestorPasses passes) has
	// all its jobs taken.
	AncestorPasses map[string][]string `json:"ancestor_passes,omitempty"`
}

// PassesFormat is the first format whose copies record their
// ancestors' passes (Manifest.AncestorPasses).
const PassesFormat = 11

// IDFormat is the first format whose manifests have a DatasetID.
const IDFormat = 8

// NewDatasetID draws a dataset's identity (Manifest.DatasetID).
func NewDatasetID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand, Go 1.24 on)
	return hex.EncodeToString(b[:])
}

// ValidDatasetID reports whether id is one NewDatasetID draws.
func ValidDatasetID(id string) bool {
	if len(id) != 16 {
		return false
	}
	for _, c := range []byte(id) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// CursorColdSweep is the first state partition (0-255) of plan-retries'
// next cold-tier sweep window.
const CursorColdSweep = "cold_sweep"

// CursorTotalsSince is when the dataset's Totals began (UTC
// milliseconds, the migrating run's clock): set by the commit that
// migrates a dataset of a format before TotalsFormat, which kept none, so
// that a reader can tell totals counted since then from a whole history
// (status: "0 new hashes" beside every hash the dataset had). Absent:
// the totals count from the dataset's first commit.
const CursorTotalsSince = "totals_since"

// TotalsFormat is the first format whose manifests keep Totals.
const TotalsFormat = 7

// ColdPrefix starts the name of a state file that holds cold-tier rows
// (schedule's cold files, which plan-retries reads only in its cold
// sweep; a migration keeps a file's kind: migratedName).
const ColdPrefix = "cold-"

// Cursor returns cursor name of the snapshot (0 if never set).
func (m *Manifest) Cursor(name string) int64 { return m.Cursors[name] }

// Table is one table's files in a snapshot.
type Table struct {
	Dir        string                `json:"dir"`        // relative to DIR, e.g. state/v/000000000003
	Partitions map[string][]FileInfo `json:"partitions"` // "00".."ff" ("" for unpartitioned tables)
	// Blooms holds an optional Bloom filter per partition, stored in
	// Dir/_bloom/.
	Blooms map[string]FileInfo `json:"blooms,omitempty"`
}

// FileInfo describes one data file.
type FileInfo struct {
	Name   string `json:"name"`
	Rows   int64  `json:"rows"`
	Size   int64  `json:"size"`
	CRC32C uint32 `json:"crc32c"`
	// Capacity is a Bloom filter's designed key count (Bloom files only).
	Capacity int64 `json:"capacity,omitempty"`
	// FooterSize and FooterCRC32C are the data file's rowio.FooterSum,
	// recorded when the file is written and kept while it is carried
	// over (format 5 on; Bloom files have none): every reader checks it
	// before it trusts what the footer says (Footer).
	FooterSize   int64  `json:"footer_size,omitempty"`
	FooterCRC32C uint32 `json:"footer_crc32c,omitempty"`
}

// Footer is the FooterSum the manifest records of data file f, the zero
// one (nothing to check) in a manifest of a format before FooterFormat.
// Readers get it with the file's path in a rowio.DataFile
// (Dataset.DataFile).
func (f FileInfo) Footer() rowio.FooterSum {
	return rowio.FooterSum{Size: f.FooterSize, CRC32C: f.FooterCRC32C}
}

// Sum is what the manifest records of the whole file f: its size and
// CRC-32C, which status --verify and the writers that copy or rewrite it
// check.
func (f FileInfo) Sum() rowio.FileSum { return rowio.FileSum{Size: f.Size, CRC32C: f.CRC32C} }

// setFooter records s in f.
func (f *FileInfo) setFooter(s rowio.FooterSum) { f.FooterSize, f.FooterCRC32C = s.Size, s.CRC32C }

// Applied records an input that a commit folded in, by content checksum.
//
// ID is the checksum the applying stage computes of the input's bytes, in
// lowercase hex, and its length tells the stage: 32 digits, dedup's
// xxh3-128 of an observations input; 64, merge's SHA-256 of a results
// input; "dataset:" and 64, merge --from's SHA-256 of the other dataset's
// manifest. An id only ever matches an id of the same stage (an input is
// observations or results, not both), so the lengths are the stages' id
// spaces, not one concept spelt two ways. Neither checksum may change: a
// ledger holds the ids older builds wrote, and merge --from tells the
// inputs two datasets share by comparing their ids (seen_count and
// attempts add up only when they share none), where a new checksum would
// give the same bytes, long gone, another id. (dedup's is xxh3 for speed:
// on the 2-core VM of README's benchmarks SHA-256 ran at 0.24 GB/s, 4.5 s
// for a 1.1 GB spool, xxh3 at 27 GB/s.)
type Applied struct {
	ID   string    `json:"id"` // the applying stage's checksum of the content, hex (see above)
	Name string    `json:"name"`
	Rows int64     `json:"rows"`
	At   time.Time `json:"at"`
}

// Rows is the table's total row count.
func (t *Table) Rows() int64 {
	var n int64
	for _, fs := range t.Partitions {
		for _, f := range fs {
			n += f.Rows
		}
	}
	return n
}

// PartitionKeys returns the table's partitions in order.
func (t *Table) PartitionKeys() []string {
	ks := make([]string, 0, len(t.Partitions))
	for k := range t.Partitions {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// PartitionDir is the relative directory of partition key in t.
func (t *Table) PartitionDir(key string) string {
	if key == "" {
		return t.Dir
	}
	return filepath.Join(t.Dir, "prefix="+key)
}

// Table returns table name, or an empty table if it has none yet.
func (m *Manifest) Table(name string) *Table {
	if t, ok := m.Tables[name]; ok {
		return t
	}
	return &Table{Partitions: map[string][]FileInfo{}, Blooms: map[string]FileInfo{}}
}

// BloomPath is the relative path of partition key's Bloom filter in t.
func (t *Table) BloomPath(f FileInfo) string { return filepath.Join(t.Dir, "_bloom", f.Name) }

// knownTable reports whether name is one of the dataset's tables (JSON
// field names match case-insensitively; table names, map keys, do not).
func knownTable(name string) bool {
	switch name {
	case TableState, TableTorrents, TablePeers, TableLeases, TableLedger:
		return true
	}
	return false
}

func manifestName(snap int64) string { return fmt.Sprintf("%012d.json", snap) }

// readManifest reads and parses the manifest at path. (A per-process
// cache of parsed manifests once softened the cost of format 3's ledger,
// ~0.4 s a parse at 200k entries; without the ledger a manifest is a list
// of files, ~100 KB for a 20M-hash state, and the cache no longer paid.)
func readManifest(path string) (*Manifest, error) {
	b, err := readManaged(path)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	return parseManifest(path, b)
}

// parseManifest parses b, the manifest at path DIR/manifests/NAME. What
// no writer of its format leaves in a committed manifest is damage, an
// error that says what is wrong (Manifest.check); a format newer than
// this build's is refused as readableFormat refuses it.
func parseManifest(path string, b []byte) (*Manifest, error) {
	corrupt := func(format string, a ...any) error {
		return fmt.Errorf("dataset: %s: corrupt manifest: "+format, append([]any{path}, a...)...)
	}
	m := &Manifest{}
	if err := json.Unmarshal(b, m); err != nil {
		return nil, corrupt("%w", err)
	}
	if m.FormatVersion < 1 {
		return nil, corrupt("no format_version")
	}
	if m.FormatVersion > FormatVersion {
		// Its layout is not this build's to check, nor to read.
		return nil, readableFormat(filepath.Dir(filepath.Dir(path)), m.FormatVersion, OldestReadFormat)
	}
	if m.FormatVersion == FormatVersion {
		// A manifest of this build's format holds only fields it knows: an
		// unknown one is damage ("ledgeR" for "ledger" would read as a
		// dataset without a ledger, and old inputs would apply again).
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&Manifest{}); err != nil {
			return nil, corrupt("%w", jsonError(err))
		}
	}
	// No format had tables of other names: "statE" would read as a
	// dataset without its state (and migrate into one).
	for _, name := range slices.Sorted(maps.Keys(m.Tables)) {
		if !knownTable(name) {
			return nil, corrupt("unknown table %s", excerpt(name))
		}
	}
	if want, err := strconv.ParseInt(strings.TrimSuffix(filepath.Base(path), ".json"), 10, 64); err == nil && m.Snapshot != want {
		// A commit builds the snapshot after the base's and clears its
		// directory first: with a wrong number that is the live one.
		return nil, corrupt("it says snapshot %d", m.Snapshot)
	}
	if err := m.check(); err != nil {
		return nil, corrupt("%w", err)
	}
	if m.Tables == nil {
		m.Tables = map[string]*Table{}
	}
	return m, nil
}

func writeManifest(path string, m *Manifest) error {
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return writeFile(path, append(b, '\n')) // its errors name path
}

// readManaged reads the dataset's own file at path (a manifest) as
// os.ReadFile does, but only a regular file (openManaged): a FIFO there
// would block the read for good, and a directory or symbolic link is no
// file a writer leaves (its rename refuses to replace them:
// fsutil.NotRegularError).
func readManaged(path string) ([]byte, error) {
	f, err := openManaged(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f)
}

// writeFile is fsutil.WriteFile (a variable for tests: to fail a
// manifest's write, before or after its rename).
var writeFile = fsutil.WriteFile

// clone deep-copies m so a transaction can edit it.
func (m *Manifest) clone() *Manifest {
	c := *m
	c.Tables = make(map[string]*Table, len(m.Tables))
	for k, t := range m.Tables {
		nt := &Table{Dir: t.Dir, Partitions: make(map[string][]FileInfo, len(t.Partitions)), Blooms: map[string]FileInfo{}}
		for p, f := range t.Blooms {
			nt.Blooms[p] = f
		}
		for p, fs := range t.Partitions {
			nt.Partitions[p] = append([]FileInfo(nil), fs...)
		}
		c.Tables[k] = nt
	}
	c.Applied = append([]Applied(nil), m.Applied...)
	if m.Cursors != nil {
		c.Cursors = make(map[string]int64, len(m.Cursors))
		for k, v := range m.Cursors {
			c.Cursors[k] = v
		}
	}
	c.Totals = maps.Clone(m.Totals)
	c.AncestorIDs = slices.Clone(m.AncestorIDs)
	if m.AncestorPasses != nil {
		c.AncestorPasses = make(map[string][]string, len(m.AncestorPasses))
		for id, passes := range m.AncestorPasses {
			c.AncestorPasses[id] = slices.Clone(passes)
		}
	}
	if m.Folder != nil {
		f := *m.Folder
		c.Folder = &f
	}
	return &c
}
