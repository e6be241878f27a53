package dataset

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// ErrConflict is returned by Commit when another writer committed after
// the transaction's base snapshot: re-apply on the new base.
var ErrConflict = errors.New("dataset changed since the transaction began")

// Tx builds the next snapshot aside, in a private staging directory, and
// publishes it in one atomic step.
type Tx struct {
	mu     sync.Mutex // guards next, staged, dirty: stages may work in parallel
	d      *Dataset
	base   *Manifest
	next   *Manifest
	stage  string
	owner  *os.File
	staged map[string]bool // staging-relative paths of files this tx wrote
	dirty  map[string]bool // tables changed
	// lock is the writer lock when the transaction holds it from Begin
	// (BeginAttempt): Commit publishes under it, Abort releases it.
	lock *Lock
	// policy is DIR/policy.json as Begin read it (PolicyFile); once
	// SetPolicy records a policy, Commit checks the file still holds it.
	policy     policyRead
	usesPolicy bool
	// Files finished in the background (FinishInBackground): bgSlots
	// bounds them (nil: none are), bgWG counts them, bgErr is the first
	// of their errors.
	bgMu    sync.Mutex
	bgSlots chan struct{}
	bgWG    sync.WaitGroup
	bgErr   error
	// readOnly: BeginRead's, which only reads (no staging folder).
	readOnly bool
	// made are the table folders under stage that StagePath made: each
	// is made once, under madeMu. Writers of one table's partitions in
	// parallel each made it otherwise, and when two raced the loser's
	// mkdir failed with EEXIST: a call that came and went between runs
	// (a kill point of scripts/killsweep.sh with it).
	madeMu sync.Mutex
	made   map[string]bool
}

// Begin starts a transaction on the current snapshot.
func (d *Dataset) Begin() (*Tx, error) {
	if d.readOnly {
		return nil, fmt.Errorf("dataset: %s: %w", d.Dir, errReadOnly)
	}
	base, err := d.Current()
	if err != nil {
		return nil, err
	}
	if base, err = d.asIdentified(base); err != nil {
		return nil, err
	}
	stage, owner, err := d.ownedDir()
	if err != nil {
		return nil, err
	}
	return &Tx{d: d, base: base, next: base.clone(), stage: stage, owner: owner,
		staged: map[string]bool{}, dirty: map[string]bool{}, policy: readPolicy(d.Dir)}, nil
}

// Base is the snapshot the transaction started from.
func (tx *Tx) Base() *Manifest { return tx.base }

// Next is the manifest being built (edit it only through Tx methods).
func (tx *Tx) Next() *Manifest { return tx.next }

// NewName returns a fresh, globally unique data file name with ext.
func NewName(ext string) string {
	b := make([]byte, 8)
	rand.Read(b)
	return "part-" + hex.EncodeToString(b) + ext
}

// StagePath is where the caller writes a new file name for partition key
// of table (bloom: a Bloom filter rather than a data file). It makes the
// table's staging folder; its error is that folder's (on a disk out of
// space or inodes: "mkdir DIR/staging/…/TABLE: no space left on device",
// where the write would only see the folder missing).
func (tx *Tx) StagePath(table, key, name string) (string, error) {
	if tx.readOnly {
		return "", fmt.Errorf("dataset: %s: %w (a transaction that only reads)", tx.d.Dir, errReadOnly)
	}
	p := tx.stagedFile(table, key, name)
	if err := tx.makeStaging(filepath.Dir(p)); err != nil {
		return "", fmt.Errorf("dataset: %w", err)
	}
	return p, nil
}

// makeStaging makes dir, a table's staging folder, unless StagePath made
// it already: once per transaction, however many writers stage files of
// the table at once (the others wait for it). A folder whose mkdir
// failed is tried again by the next call.
func (tx *Tx) makeStaging(dir string) error {
	tx.madeMu.Lock()
	defer tx.madeMu.Unlock()
	if tx.made[dir] {
		return nil
	}
	if err := mkdirAll(dir, 0o755); err != nil {
		return err
	}
	if tx.made == nil {
		tx.made = map[string]bool{}
	}
	tx.made[dir] = true
	return nil
}

// mkdirAll makes a staging folder (a variable for tests: to fail it, as a
// file system out of space or inodes does).
var mkdirAll = os.MkdirAll

// stagedFile is where file name of partition key of table is staged: one
// folder per table, not per partition (a commit of 256 partitions made
// 256 folders only to remove them; creating inodes is most of a commit's
// file system time on ext4).
func (tx *Tx) stagedFile(table, key, name string) string {
	return filepath.Join(tx.stage, table, key+"_"+name)
}

// Stage records a file the caller finished writing at StagePath and
// returns its FileInfo (size, CRC-32C and, of a .parquet data file, its
// footer's FooterSum computed here; rows from the caller). Durability comes from one syncfs(2) at commit.
func (tx *Tx) Stage(table, key, name string, rows int64) (FileInfo, error) {
	p := tx.stagedFile(table, key, name)
	f, err := os.Open(p)
	if err != nil {
		return FileInfo{}, fmt.Errorf("dataset: %w", err)
	}
	defer f.Close()
	n, crc, err := crcOf(f, nil)
	if err != nil {
		return FileInfo{}, fmt.Errorf("dataset: %s: %w", p, err)
	}
	info := FileInfo{Name: name, Rows: rows, Size: n, CRC32C: crc}
	if err := info.sumFooter(p); err != nil {
		return FileInfo{}, fmt.Errorf("dataset: %w", err)
	}
	tx.markStaged(table, key, name)
	return info, nil
}

func (tx *Tx) markStaged(table, key, name string) {
	tx.mu.Lock()
	tx.staged[filepath.Join(table, key, name)] = true
	tx.mu.Unlock()
}

// SetPartition sets the files of partition key of table: names staged by
// this transaction or kept from the base snapshot. No files: the partition
// is dropped.
func (tx *Tx) SetPartition(table, key string, files []FileInfo) {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	t := tx.table(table)
	if len(files) == 0 {
		delete(t.Partitions, key)
	} else {
		t.Partitions[key] = files
	}
	tx.dirty[table] = true
}

// SetBloom sets the Bloom filter file of partition key (staged by Stage
// with the same key).
func (tx *Tx) SetBloom(table, key string, f FileInfo) {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	tx.table(table).Blooms[key] = f
	tx.dirty[table] = true
}

func (tx *Tx) table(name string) *Table {
	t, ok := tx.next.Tables[name]
	if !ok {
		t = &Table{Partitions: map[string][]FileInfo{}, Blooms: map[string]FileInfo{}}
		tx.next.Tables[name] = t
	}
	if t.Blooms == nil {
		t.Blooms = map[string]FileInfo{}
	}
	return t
}

// AddApplied records an input in the ledger. Its name is kept as given
// but for bytes that are not UTF-8, escaped (schema.EscapeInvalidUTF8): a
// file name may hold any bytes, and the ledger's name column is a STRING
// that DuckDB must be able to read for as long as the entry lives.
func (tx *Tx) AddApplied(a Applied) {
	a.Name = schema.EscapeInvalidUTF8(a.Name)
	tx.next.Applied = append(tx.next.Applied, a)
}

// SetPolicy records the policy in force: the one the transaction's work
// ran under, read from PolicyFile. Commit then refuses (ErrConflict) to
// publish it if DIR/policy.json changed since Begin.
func (tx *Tx) SetPolicy(raw []byte) {
	tx.next.Policy = append([]byte(nil), raw...)
	tx.usesPolicy = true
}

// SetCursor sets cursor name of the next snapshot (see Manifest.Cursors):
// it is published by this transaction's commit, or not at all.
func (tx *Tx) SetCursor(name string, v int64) {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if tx.next.Cursors == nil {
		tx.next.Cursors = map[string]int64{}
	}
	tx.next.Cursors[name] = v
}

// AddTotal adds n to total name of the next snapshot (see
// Manifest.Totals): published with this transaction's commit, or not at
// all. A transaction re-applied on a moved base begins anew, from that
// base's totals.
func (tx *Tx) AddTotal(name string, n int64) {
	if n == 0 {
		return
	}
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if tx.next.Totals == nil {
		tx.next.Totals = map[string]int64{}
	}
	tx.next.Totals[name] += n
}

// CommitOptions control Commit.
type CommitOptions struct {
	LockWait time.Duration // wait this long for the lock (0: fail at once)
	Keep     int           // snapshots to keep for readers (min 1; default 3)
	Writer   string        // command name recorded in the manifest
	// Ready, if set, is asked under the writer lock once the snapshot is
	// built and synced, just before its commit point: an error from it
	// stops the commit there, publishing nothing, and Commit returns it
	// as it is. A writer whose commit hands out work (plan-retries'
	// leases) checks here, as late as it can, that the work still has a
	// taker.
	Ready func() error
	// No time: the manifest's created_at is when the snapshot is made,
	// the wall clock, whatever a stage's --now (its logical clock) says.
}

// Abort discards the transaction's staged files, and releases the
// writer lock if it holds it (BeginAttempt).
func (tx *Tx) Abort() {
	tx.bgWG.Wait() // no file is still being written when its folder goes
	tx.lock.Release()
	tx.lock = nil
	if tx.owner != nil {
		tx.owner.Close()
		tx.owner = nil
	}
	if tx.stage != "" {
		os.RemoveAll(tx.stage)
	}
}

func isConflict(err error) bool { return errors.Is(err, ErrConflict) }

// DropBloom removes the Bloom filter of partition key of table: readers
// then confirm every hash of the partition against its files. A writer
// that adds hashes without rebuilding the filter must drop it.
func (tx *Tx) DropBloom(table, key string) {
	delete(tx.table(table).Blooms, key)
	tx.dirty[table] = true
}

// MaxReapply is how many times a writer re-applies its work on a newer
// snapshot before it gives up with the locked exit status (a writer that
// may wait for the lock holds it from its HoldLockAfter-th try on, and
// so never loses that many).
const MaxReapply = 10

// Reapply decides what a writer does with Commit's error on its
// attempt-th try: retry (another writer committed first; re-apply on the
// new snapshot), or return err, which is the locked error once the
// writer has lost the race MaxReapply times.
func Reapply(err error, attempt int) (retry bool, _ error) {
	if !isConflict(err) {
		return false, err
	}
	if attempt < MaxReapply {
		return true, nil
	}
	return false, fmt.Errorf("%w: %w", exitcode.ErrLocked, err)
}
