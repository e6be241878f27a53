package dataset

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/infohash/infohash/formats/fsutil"
)

// ownEntries are the names a dataset's writers make at the top of DIR:
// what creating it makes, what a commit that failed before its commit
// point may have left, and dedup's input cache (only a cache).
var ownEntries = map[string]bool{
	"CURRENT": true, "LOCK": true, "manifests": true, "staging": true, "inbox": true, "policy.json": true, InputCacheFile: true,
	TableState: true, TableTorrents: true, TablePeers: true, TableLeases: true, TableLedger: true,
}

// RemoveUnused removes dir, a dataset created for a run that then
// committed nothing (its input was bad, it failed, it was interrupted),
// so that a mistyped or bad input leaves no dataset behind. The caller
// must know that dir did not exist before the run: RemoveUnused cannot
// tell a folder it made from one the user made.
//
// Under the writer lock (taken at once, or dir is kept; with no LOCK in
// dir and no room to make one, as when the run failed on a full file
// system before it made LOCK, without it: see noRoomForLock), dir is removed
// only if no Dataset has it open (another run is in it, perhaps waiting
// for the lock to create it, or about to begin a transaction: the caller
// closes its own Dataset first), nobody committed to it (CURRENT, if
// there is one yet, names snapshot 0), no writer stages into it (staging/
// is empty), its inbox holds no file (a spool of stdin, bad input set
// aside as *.bad, a partial batch: what a run read from a stream is never
// lost), and it holds nothing but a dataset's own entries. Otherwise kept
// says, for a log line, what is worth keeping, and nothing is removed: an
// empty dataset left behind is better than one removed under a run.
// CURRENT goes first: a kill midway leaves a folder with no dataset in
// it, which the next writer creates afresh. policy is what the writers'
// default DIR/policy.json holds: a policy.json that holds anything else
// was set by someone ("policy set" on the new dataset) and is kept (nil:
// any policy.json is a writer's own).
func RemoveUnused(dir string, policy []byte) (kept string, err error) {
	return removeUnused(dir, policy, false, nil)
}

// EmptyUnused is RemoveUnused for a dir that existed, empty, before the
// run: it removes what the run made in dir, under the same conditions,
// and keeps dir itself (the user's folder, perhaps with its own
// permissions or a mount on it).
func EmptyUnused(dir string, policy []byte) (kept string, err error) {
	return removeUnused(dir, policy, true, nil)
}

// ClearUnused is EmptyUnused for a dir that held other entries (theirs,
// by name: the user's files, a lock file of a cron line) and no dataset
// before the run: it removes only what the run made in dir, under the
// same conditions, and keeps theirs and dir itself.
func ClearUnused(dir string, policy []byte, theirs []string) (kept string, err error) {
	keep := make(map[string]bool, len(theirs))
	for _, name := range theirs {
		keep[name] = true
	}
	return removeUnused(dir, policy, true, keep)
}

func removeUnused(dir string, policy []byte, keepDir bool, theirs map[string]bool) (kept string, err error) {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	l, err := tryLock(dir)
	switch {
	case errors.Is(err, ErrLocked):
		return "another writer holds its lock", nil
	case err != nil && !noRoomForLock(dir, err):
		return "", err
	case err == nil:
		defer l.Release()
	}
	claim, err := claimUnused(dir)
	if err != nil {
		return "", err
	} else if claim == nil {
		return "another run has it open", nil
	}
	defer claim.Close()
	if kept, err := worthKeeping(dir, policy, theirs); kept != "" || err != nil {
		return kept, err
	}
	if err := os.Remove(filepath.Join(dir, "CURRENT")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("dataset: %s: %w", dir, err)
	}
	if !keepDir {
		if err := os.RemoveAll(dir); err != nil {
			return "", fmt.Errorf("dataset: %s: %w", dir, err)
		}
		return "", nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("dataset: %s: %w", dir, err)
	}
	for _, e := range ents { // worthKeeping saw only the dataset's own, and theirs
		if theirs[e.Name()] {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return "", fmt.Errorf("dataset: %s: %w", dir, err)
		}
	}
	return "", fsutil.SyncDir(dir)
}

// noRoomForLock reports whether err, from taking dir's writer lock, is
// that DIR/LOCK could not be made for want of room (a file system out of
// space or inodes, which may be why the run that made dir failed before
// it made LOCK) and there is no LOCK: then no writer ever held the lock,
// and the claim on dir (claimUnused) keeps every other run out on its
// own, since a run has dir open before it makes LOCK.
func noRoomForLock(dir string, err error) bool {
	if !errors.Is(err, syscall.ENOSPC) && !errors.Is(err, syscall.EDQUOT) {
		return false
	}
	_, serr := os.Lstat(filepath.Join(dir, "LOCK"))
	return errors.Is(serr, fs.ErrNotExist)
}

// worthKeeping says what in dir RemoveUnused must not remove ("" if
// nothing).
func worthKeeping(dir string, policy []byte, theirs map[string]bool) (string, error) {
	if ok, err := hasCurrent(dir); err != nil {
		return "", err
	} else if ok {
		m, err := (&Dataset{Dir: dir}).Current()
		if err != nil {
			return "", err
		}
		if m.Snapshot != 0 {
			return fmt.Sprintf("snapshot %d was committed", m.Snapshot), nil
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("dataset: %s: %w", dir, err)
	}
	for _, e := range ents {
		if !ownEntries[e.Name()] && !theirs[e.Name()] && !strings.HasPrefix(e.Name(), fsutil.TempPrefix) {
			return fmt.Sprintf("it holds %s, which no dataset writer made", e.Name()), nil
		}
	}
	if policy != nil {
		b, err := readPolicyFile(filepath.Join(dir, "policy.json"))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("dataset: %w", err)
		}
		if err == nil && !bytes.Equal(b, policy) {
			return "it holds a policy.json someone set (not the default)", nil
		}
	}
	if ents, err := os.ReadDir(filepath.Join(dir, "staging")); err == nil && len(ents) > 0 {
		return "a writer is staging a commit in " + filepath.Join("staging", ents[0].Name()), nil
	}
	inbox := ""
	err = filepath.WalkDir(filepath.Join(dir, "inbox"), func(p string, e fs.DirEntry, err error) error {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return err
		case e.IsDir():
			return nil
		}
		inbox, _ = filepath.Rel(dir, p)
		return fs.SkipAll
	})
	if err != nil {
		return "", fmt.Errorf("dataset: %s: %w", dir, err)
	}
	if inbox != "" {
		return "it holds " + inbox + ", input read from a stream", nil
	}
	return "", nil
}
