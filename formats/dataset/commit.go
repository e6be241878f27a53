package dataset

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/infohash/infohash/formats/fsutil"
)

// Commit publishes the transaction as the next snapshot. It holds the
// writer lock only for the publish step (or from Begin: BeginAttempt). If
// another writer committed since Begin, or DIR/policy.json changed since
// Begin under a transaction that records its policy (SetPolicy), it
// returns ErrConflict and the caller re-applies its work on the new base
// (or gives up with the locked exit status). An error
// with a nil manifest committed nothing; an *AfterCommitError comes with
// the committed manifest: a step after the commit point failed. The new
// snapshot's tables are checked and built in a fixed order (tables by
// name, partitions by key, then Bloom filters by key) and the first
// failure stops the commit: of several damaged files, the error names
// the same one every time.
func (tx *Tx) Commit(ctx context.Context, o CommitOptions) (_ *Manifest, err error) {
	defer tx.Abort()
	if tx.readOnly {
		return nil, fmt.Errorf("dataset: %s: %w (a transaction that only reads)", tx.d.Dir, errReadOnly)
	}
	// Nothing is published before every staged file is written; what the
	// commit stages itself (the ledger) is written before it goes on.
	if err := tx.finishInForeground(); err != nil {
		return nil, err
	}
	if o.Keep < 1 {
		o.Keep = 3
	}
	if err := tx.rollLedger(); err != nil {
		return nil, tx.Moved(err)
	}
	if err := tx.fillEmptyTables(); err != nil {
		return nil, err
	}
	tx.dropUncounted()
	// A transaction begun under the lock (BeginAttempt) publishes under
	// it: flock on a second descriptor of LOCK would wait for this one.
	l := tx.lock
	tx.lock = nil
	if l == nil {
		if l, err = acquireLock(ctx, tx.d.Dir, o.LockWait); err != nil {
			return nil, err
		}
	}
	defer l.Release()
	cur, err := tx.d.Current()
	if err != nil {
		return nil, err
	}
	if cur.Snapshot != tx.base.Snapshot {
		return nil, fmt.Errorf("dataset: %s: snapshot %d became %d: %w", tx.d.Dir, tx.base.Snapshot, cur.Snapshot, ErrConflict)
	}
	if err := tx.checkPolicy(); err != nil {
		return nil, err
	}
	next := tx.next
	next.Snapshot = tx.base.Snapshot + 1
	next.FormatVersion = FormatVersion
	if err := tx.d.identify(tx.base, next); err != nil {
		return nil, err
	}
	next.CreatedAt = time.Now().UTC() // the wall clock, never a stage's --now
	next.Writer = o.Writer
	// Until CURRENT names it, what this commit builds is nobody's: on an
	// error before the commit point it goes, under the lock, rather than
	// hold a whole snapshot's space against the retry (dropUnpublished
	// reads CURRENT to tell; the error returned is the one that failed
	// the commit).
	defer func() {
		if _, committed := AsAfterCommit(err); err != nil && !committed {
			tx.d.dropUnpublished(tx.base.Snapshot)
		}
	}()
	// A table the transaction did not touch keeps the base's directory,
	// linking nothing: its files get the size check of the files a
	// build carries over all the same, so that no commit publishes a
	// snapshot naming a file known to be damaged.
	for _, name := range slices.Sorted(maps.Keys(next.Tables)) {
		if !tx.dirty[name] {
			if err := checkUntouched(tx.d.Dir, next.Tables[name]); err != nil {
				return nil, fmt.Errorf("dataset: %s: publishing snapshot %d: table %s: %w", tx.d.Dir, next.Snapshot, name, err)
			}
		}
	}
	// The tables it changed are built in name order (buildTable: each
	// table's partitions in key order, then its Bloom filters), so that
	// of several failures the same one is reported every time.
	for _, name := range slices.Sorted(maps.Keys(tx.dirty)) {
		if err := tx.buildTable(name, next.Snapshot); err != nil {
			return nil, err
		}
	}
	// No commit publishes a manifest its readers would refuse as damaged,
	// nor a Bloom filter that misses some of its partition's hashes.
	if err := next.check(); err != nil {
		return nil, fmt.Errorf("dataset: %s: publishing snapshot %d: %w", tx.d.Dir, next.Snapshot, err)
	}
	if err := next.checkBlooms(); err != nil {
		return nil, fmt.Errorf("dataset: %s: publishing snapshot %d: %w", tx.d.Dir, next.Snapshot, err)
	}
	// Every staged file and new directory reaches the disk before the
	// manifest that names them.
	if err := syncFS(tx.d.Dir); err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	mdir := filepath.Join(tx.d.Dir, "manifests")
	if err := os.MkdirAll(mdir, 0o755); err != nil {
		return nil, fmt.Errorf("dataset: %s: publishing snapshot %d: %w", tx.d.Dir, next.Snapshot, err)
	}
	mname := manifestName(next.Snapshot)
	if err := writeManifest(filepath.Join(mdir, mname), next); err != nil {
		return nil, fmt.Errorf("dataset: publishing snapshot %d: %w", next.Snapshot, err)
	}
	if o.Ready != nil {
		if err := o.Ready(); err != nil {
			return nil, err
		}
	}
	// The commit point: once CURRENT is renamed, the snapshot is
	// committed whatever fails after (an *AfterCommitError, returned
	// with the manifest).
	if err := fsutil.ReplaceFile(filepath.Join(tx.d.Dir, "CURRENT"), []byte(mname+"\n")); err != nil {
		return nil, fmt.Errorf("dataset: publishing snapshot %d: %w", next.Snapshot, err)
	}
	err = tx.d.afterCommit(next)
	if ac, ok := AsAfterCommit(err); ok && !ac.Durable {
		// A crash may bring back the base snapshot: keep its files (the
		// next commit collects them).
		return next, err
	}
	// Old snapshots go after the lock is released: on a large dataset gc
	// unlinks thousands of files (seconds, where the file system discards
	// freed blocks at once), which other writers need not wait for. It
	// only removes directories no kept manifest names, and a later
	// writer's snapshot names only its own new directories and its base's.
	l.Release()
	tx.d.gc(next.Snapshot, o.Keep)
	return next, err
}

// buildTable lays out the new snapshot directory of table: staged files
// move in, kept files are hard-linked from the base snapshot once a stat
// shows they still have their recorded size (carryOver), under a name of
// this snapshot's (carriedName), which the new manifest records. It goes
// through the partitions in key order (PartitionKeys), each partition's
// files in the manifest's order, then the Bloom filters in key order, and
// stops at the first failure: the same one whatever the run.
func (tx *Tx) buildTable(name string, snap int64) error {
	t := tx.next.Tables[name]
	oldDir := t.Dir
	rel := filepath.Join(name, "v", fmt.Sprintf("%012d", snap))
	abs := filepath.Join(tx.d.Dir, rel)
	if rel == oldDir {
		return fmt.Errorf("dataset: %s: table %s of snapshot %d is already in %s: corrupt manifest", tx.d.Dir, name, snap, rel)
	}
	fail := func(what string, err error) error {
		return fmt.Errorf("dataset: %s: publishing snapshot %d: %s: %w", tx.d.Dir, snap, what, err)
	}
	if err := removeAll(abs); err != nil {
		return fail("removing what an unfinished commit left in "+rel, err)
	}
	// place puts f in dstDir under newName: moved in if staged, else
	// linked from oldPath in the base snapshot.
	place := func(key, dstDir string, f FileInfo, oldPath, newName string) error {
		if err := os.MkdirAll(dstDir, 0o755); err != nil {
			return err
		}
		if tx.staged[filepath.Join(name, key, f.Name)] {
			return os.Rename(tx.stagedFile(name, key, f.Name), filepath.Join(dstDir, f.Name))
		}
		if oldDir == "" {
			return fmt.Errorf("file %s is neither staged nor in the base snapshot", f.Name)
		}
		return carryOver(filepath.Join(tx.d.Dir, oldPath), filepath.Join(dstDir, newName), f)
	}
	for _, key := range t.PartitionKeys() {
		pdir := filepath.Join(abs, strings.TrimPrefix((&Table{Dir: ""}).PartitionDir(key), "/"))
		// A new list: the caller's (SetPartition) may be the base
		// manifest's own, which keeps the base's names.
		files := make([]FileInfo, len(t.Partitions[key]))
		for i, f := range t.Partitions[key] {
			old := filepath.Join((&Table{Dir: oldDir}).PartitionDir(key), f.Name)
			nf := f
			if !tx.staged[filepath.Join(name, key, f.Name)] {
				nf.Name = carriedName(f.Name, snap)
			}
			if err := place(key, pdir, f, old, nf.Name); err != nil {
				return fail("table "+name, err)
			}
			files[i] = nf
		}
		t.Partitions[key] = files
	}
	for _, key := range slices.Sorted(maps.Keys(t.Blooms)) {
		f := t.Blooms[key]
		if _, ok := t.Partitions[key]; !ok {
			delete(t.Blooms, key)
			continue
		}
		bdir := filepath.Join(abs, "_bloom")
		// Bloom filters keep their names: no glob lists _bloom/, and
		// each reader finds its partition's filter by the manifest.
		if err := place(key, bdir, f, filepath.Join(oldDir, "_bloom", f.Name), f.Name); err != nil {
			return fail("table "+name+" Bloom filter", err)
		}
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return fail("table "+name, err)
	}
	t.Dir = rel
	return nil
}

// removeAll is os.RemoveAll (a variable for tests: root removes what
// chmod forbids).
var removeAll = os.RemoveAll

// syncFS is fsutil.SyncFS (a variable for tests: to fail a commit after
// it has built its snapshot directories).
var syncFS = fsutil.SyncFS

// gcStarts, when set (by tests), is called as gc starts.
var gcStarts func()

// gc removes manifests and snapshot directories older than the last keep
// snapshots, latest being the newest this writer committed. It runs
// without the lock: writers may run it at once (a removal of what
// another already removed is ignored).
func (d *Dataset) gc(latest int64, keep int) {
	if gcStarts != nil {
		gcStarts()
	}
	ents, _ := os.ReadDir(filepath.Join(d.Dir, "manifests"))
	referenced := map[string]bool{}
	var old []string
	for _, e := range ents {
		n, err := strconv.ParseInt(strings.TrimSuffix(e.Name(), ".json"), 10, 64)
		if err != nil || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		p := filepath.Join(d.Dir, "manifests", e.Name())
		if n > latest-int64(keep) {
			for _, dir := range tableDirs(p) {
				referenced[dir] = true
			}
			continue
		}
		old = append(old, p)
	}
	sort.Strings(old)
	for dir := range d.linkedDirs() { // until a failed link update is rolled forward
		referenced[dir] = true
	}
	for name := range map[string]bool{TableState: true, TableTorrents: true, TablePeers: true, TableLeases: true, TableLedger: true} {
		vs, _ := os.ReadDir(filepath.Join(d.Dir, name, "v"))
		for _, v := range vs {
			rel := filepath.Join(name, "v", v.Name())
			n, err := strconv.ParseInt(v.Name(), 10, 64)
			if err != nil || referenced[rel] || n > latest {
				continue
			}
			os.RemoveAll(filepath.Join(d.Dir, rel))
		}
	}
	for _, p := range old {
		os.Remove(p)
	}
	warnPruned(d.Dir, keep, old)
}

// prunedWarnAt is how many old snapshots one gc removes before it warns:
// under a steady --keep a commit removes one, two when another writer's
// gc (or a killed one's) had not run.
const prunedWarnAt = 3

// warnPruned warns when a commit's gc removed the snapshots old
// (manifest paths, in order) beyond what a steady --keep removes: an
// earlier writer kept more (crawl-pass's KEEP), and this one's --keep
// (a run by hand, its default 3) took that history from readers of
// status's frozen line without a word.
func warnPruned(dir string, keep int, old []string) {
	if len(old) < prunedWarnAt {
		return
	}
	first, last := strings.TrimSuffix(filepath.Base(old[0]), ".json"), strings.TrimSuffix(filepath.Base(old[len(old)-1]), ".json")
	slog.Warn(fmt.Sprintf("dataset: %s: this commit removed %d older snapshots (%s to %s), keeping the last %d (--keep): "+
		"a writer before kept more; give every writer of the dataset the same --keep (crawl-pass: KEEP) to keep them for readers",
		dir, len(old), first, last, keep), "removed", len(old), "keep", keep)
}

// tableDirs returns the table directories that the manifest at path
// names, read as leniently as its JSON allows: a kept manifest that
// readManifest refuses as damaged (or one of a format 4 from before
// every table had a file) still keeps what it names from gc.
func tableDirs(path string) []string {
	b, err := readManaged(path)
	if err != nil {
		return nil
	}
	var m struct {
		Tables map[string]*struct {
			Dir string `json:"dir"`
		} `json:"tables"`
	}
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	var dirs []string
	for _, t := range m.Tables {
		if t != nil && t.Dir != "" {
			dirs = append(dirs, t.Dir)
		}
	}
	return dirs
}
