package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/internal/exitcode"
)

// Dataset is an open dataset directory.
type Dataset struct {
	Dir string
	// Created is set when Open made a new, empty dataset (OpenOptions.Create).
	Created bool
	// readOnly is set by OpenReadOnly: Begin refuses.
	readOnly bool
	// use holds a shared flock on Dir while the run uses it (useDir).
	use *os.File
	// migrated is the migration Open committed (Migration), if any.
	migrated *Migrated
}

// OpenOptions control Open.
type OpenOptions struct {
	Create   bool          // create an empty dataset if DIR has none
	LockWait time.Duration // how long maintenance on open may wait for the lock
	// Keep is the snapshots kept for readers (CommitOptions.Keep; 0: 3)
	// by a commit Open makes itself (a migration): the
	// run's --keep, which the run's own commit then keeps too.
	Keep int
	// Now is the opener's clock (its --now; zero: the wall clock), which
	// a migration's repairs reckon from (format 12 makes the hashes it
	// repairs due at it), so that a run with a fixed --now stays
	// reproducible. Commits' created_at stay on the wall clock.
	Now time.Time
}

// ErrNotDataset is returned when the folder DIR holds no dataset and
// Create is off (ErrNoFolder when there is no folder DIR).
var ErrNotDataset = errors.New("not an infohash dataset (no CURRENT file)")

// Open opens (or creates) the dataset in dir, migrating an older format
// (the one commit Open makes), rolling forward a commit a crash left
// half-published, and removing the debris of dead writers: it is for
// writers. A copy's id of its own is drawn by its first writer's own
// commit (Begin: asIdentified), not here. A command that only reads
// uses OpenReadOnly. Close the Dataset when done with it: until then no
// other run's RemoveUnused removes dir.
func Open(ctx context.Context, dir string, o OpenOptions) (_ *Dataset, err error) {
	use, err := useDir(dir, o.Create)
	if err != nil {
		return nil, err
	}
	d := &Dataset{Dir: dir, use: use}
	defer func() {
		if err != nil {
			d.Close()
		}
	}()
	if ok, err := hasCurrent(dir); err != nil {
		return nil, err
	} else if !ok || d.use == nil {
		if !o.Create {
			return nil, notDataset(dir)
		}
		if err := d.create(ctx, o.LockWait); err != nil {
			return nil, err
		}
		d.Created = true
	}
	m, err := d.Current()
	if err != nil {
		return nil, err
	}
	if m.FormatVersion > FormatVersion {
		return nil, readableFormat(dir, m.FormatVersion, OldestReadFormat)
	}
	if err := d.checkWritable(m); err != nil {
		return nil, err
	}
	// What killed writers left goes first, on an older format too: the
	// staging folder of a migration killed while it rewrote the state's
	// files holds a copy of the whole state, which the migration below
	// would write once more beside it (it rolls forward and drops a
	// half-published commit of the current format only).
	d.maintain()
	if m.FormatVersion < FormatVersion {
		if err := d.migrate(ctx, m, o); err != nil {
			return nil, err
		}
	}
	return d, nil
}

func (d *Dataset) create(ctx context.Context, wait time.Duration) error {
	if err := MakeDir(d.Dir); err != nil {
		return err
	}
	for _, sub := range []string{"", "manifests", "staging", "inbox"} {
		if err := os.MkdirAll(filepath.Join(d.Dir, sub), 0o755); err != nil {
			return fmt.Errorf("dataset: %s: %w", d.Dir, err)
		}
	}
	// The subfolders' entries are durable before CURRENT's rename, which
	// may reach the disk before the fsync of DIR that follows it: else a
	// power cut could leave CURRENT naming a manifest in a manifests/
	// that is not there (an existing empty DIR is durable already).
	if err := syncDir(d.Dir); err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	l, err := acquireLock(ctx, d.Dir, wait)
	if err != nil {
		return err
	}
	defer l.Release()
	if _, err := os.Stat(filepath.Join(d.Dir, "CURRENT")); err == nil {
		return nil // created concurrently
	}
	m := &Manifest{FormatVersion: FormatVersion, CreatedAt: time.Now().UTC(), Writer: "create", Tables: map[string]*Table{},
		DatasetID: NewDatasetID()}
	if err := d.identify(nil, m); err != nil {
		return err
	}
	if err := writeManifest(filepath.Join(d.Dir, "manifests", manifestName(0)), m); err != nil {
		return err
	}
	return fsutil.WriteFile(filepath.Join(d.Dir, "CURRENT"), []byte(manifestName(0)+"\n"))
}

// hasCurrent reports whether dir holds a dataset's commit point (CURRENT);
// a dir that is missing, or a file, holds none.
func hasCurrent(dir string) (bool, error) {
	_, err := os.Stat(filepath.Join(dir, "CURRENT"))
	switch {
	case errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("dataset: %s: %w", dir, err)
	}
	return true, nil
}

// MakeDir makes the folder of a new dataset dir unless it exists. Only
// dir itself may be new, not its parent: a mistyped --data would otherwise
// grow a whole tree and a dataset nobody reads (bad input). A folder that
// exists must be one a dataset may be made in (creatable): a non-empty
// folder that holds no dataset is bad input.
func MakeDir(dir string) error {
	if err := parentReady(dir); err != nil {
		return err
	}
	err := os.Mkdir(dir, 0o755)
	switch {
	case errors.Is(err, os.ErrExist):
		return creatable(dir)
	case err != nil:
		return fmt.Errorf("dataset: %w", err)
	}
	return nil
}

// parentReady is the bad-input error for a new dataset dir whose parent
// is missing or not a folder (MakeDir makes dir alone), nil otherwise.
func parentReady(dir string) error {
	parent := filepath.Dir(filepath.Clean(dir))
	if fi, err := os.Stat(parent); errors.Is(err, os.ErrNotExist) {
		return exitcode.BadInput(fmt.Errorf("dataset: %s: no dataset there, and its parent folder %s does not exist to create one in", dir, parent))
	} else if err == nil && !fi.IsDir() {
		return exitcode.BadInput(fmt.Errorf("dataset: %s: no dataset there, and %s is not a folder to create one in", dir, parent))
	}
	return nil
}

// Current reads the latest committed manifest.
func (d *Dataset) Current() (*Manifest, error) {
	name, size, err := readPointer(filepath.Join(d.Dir, "CURRENT"))
	if err != nil {
		return nil, fmt.Errorf("dataset: %s: %w", d.Dir, err)
	}
	if !isManifestName(name) {
		// Something else was written over it (an export to DIR/CURRENT):
		// quote what starts it, not all of it.
		return nil, fmt.Errorf("dataset: %s/CURRENT: corrupt pointer %s", d.Dir, excerptOf(name, size))
	}
	p := filepath.Join(d.Dir, "manifests", name)
	b, err := readManaged(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &shortError{msg: fmt.Sprintf("dataset: %s/CURRENT names manifest %s, which does not exist", d.Dir, name), err: err}
	} else if err != nil {
		return nil, fmt.Errorf("dataset: %s/CURRENT names manifest %s: %w", d.Dir, name, err)
	}
	return parseManifest(p, b)
}

// maxPointer is more than CURRENT ever holds (a manifest name and a
// newline).
const maxPointer = excerptLen

// readPointer reads the manifest name in the pointer file at path,
// trimmed, and at most maxPointer bytes of it, however big the file is;
// size is the file's size.
func readPointer(path string) (name string, size int64, err error) {
	f, err := openManaged(path, os.O_RDONLY, 0)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	b := make([]byte, maxPointer)
	n, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", 0, fmt.Errorf("%s: %w", path, err)
	}
	size = int64(n)
	if fi, err := f.Stat(); err == nil && fi.Size() > size {
		size = fi.Size()
	}
	if size > int64(n) {
		return string(b[:n]), size, nil // too big to be a pointer: not trimmed
	}
	return strings.TrimSpace(string(b[:n])), size, nil
}

// isManifestName reports whether name is one manifestName makes: digits
// and ".json", nothing that could leave DIR/manifests.
func isManifestName(name string) bool {
	num, ok := strings.CutSuffix(name, ".json")
	if !ok || num == "" || len(num) > 19 {
		return false
	}
	for _, c := range []byte(num) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Path joins a dataset-relative path onto the dataset directory.
func (d *Dataset) Path(rel ...string) string {
	return filepath.Join(append([]string{d.Dir}, rel...)...)
}

// FilePath is the absolute path of file f of partition key in table t.
func (d *Dataset) FilePath(t *Table, key string, f FileInfo) string {
	return filepath.Join(d.Dir, t.PartitionDir(key), f.Name)
}

// maintain rolls table symlinks forward to the committed manifest and
// removes what dead writers left: staging directories, and the snapshot
// directories and manifests a commit built but never published
// (dropUnpublished: a kill, or a failure whose cleanup failed too, before
// CURRENT named them). It only acts when the lock is free at once: a
// live writer will do the same itself.
//
// The links follow CURRENT as read under the lock: a manifest read
// before it may be stale (another writer committed since), and linking to
// it would point them back at a snapshot whose directories gc may have
// removed. A CURRENT of another format is left to its writers.
func (d *Dataset) maintain() {
	l, err := tryLock(d.Dir)
	if err != nil {
		return
	}
	defer l.Release()
	if m, err := d.Current(); err == nil && m.FormatVersion == FormatVersion {
		if err := d.linkCurrent(m); err != nil { // rolling a failed update forward failed too
			slog.Warn("dataset: could not point the tables' current links at the committed snapshot (DuckDB reads an older one)",
				"dir", d.Dir, "snapshot", m.Snapshot, "err", err)
		}
		if gone := d.dropUnpublished(m.Snapshot); len(gone) > 0 {
			slog.Info("dataset: removed what a commit that failed or was killed built for a snapshot it never published",
				"dir", d.Dir, "snapshot", m.Snapshot, "removed", gone)
		}
	}
	d.cleanStaging()
	fsutil.SweepTemps(d.Dir, "")               // e.g. a killed policy save's .tmp-policy.json-*
	fsutil.SweepTemps(d.Path("manifests"), "") // a killed manifest write's
}

// cleanStaging removes staging directories of writers that died: each live
// writer holds a shared flock on its directory's .owner file, from before
// the directory has its name (ownedDir) until it is removed. Others (one
// set up under a temporary name, or by an earlier version) are left until
// they are a minute old. A dataset there (a CURRENT file and manifests/,
// which no staging directory holds) is never removed.
func (d *Dataset) cleanStaging() {
	ents, _ := os.ReadDir(filepath.Join(d.Dir, "staging"))
	for _, e := range ents {
		dir := filepath.Join(d.Dir, "staging", e.Name())
		if isDatasetDir(dir) {
			// A dataset an older version let --data make in here (Nested):
			// no writer's, and not debris to remove.
			slog.Warn("dataset: a dataset lies in the staging folder; left alone: move it out of "+d.Dir, "dir", dir)
			continue
		}
		if !strings.HasSuffix(e.Name(), bornOwned) || strings.HasPrefix(e.Name(), fsutil.TempPrefix) {
			// Not born locked (ownedDir): a writer may be setting it up.
			info, err := e.Info()
			if err != nil || time.Since(info.ModTime()) < time.Minute {
				continue
			}
		}
		f, err := fsutil.OpenRegular(filepath.Join(dir, ".owner"), os.O_RDONLY, 0)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				os.RemoveAll(dir)
			}
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			os.RemoveAll(dir)
		}
		f.Close()
	}
}
