package fsutil

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// syncParent is SyncDir (a variable for tests: an fsync cannot be seen
// from the file system).
var syncParent = SyncDir

// MkdirAllSynced is os.MkdirAll made durable: each folder it creates has
// its entry in its parent fsynced before it returns, parents first, so
// that a power cut cannot lose a folder (and what is later renamed into
// it, which may reach the disk first) once it returned. Folders that were
// there are left alone, and cost one stat.
func MkdirAllSynced(dir string, perm fs.FileMode) error {
	var made []string // the folders missing, deepest first
	for p := filepath.Clean(dir); ; {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		made = append(made, p)
		up := filepath.Dir(p)
		if up == p {
			break
		}
		p = up
	}
	if err := os.MkdirAll(dir, perm); err != nil {
		return err
	}
	for i := len(made) - 1; i >= 0; i-- {
		if err := syncParent(filepath.Dir(made[i])); err != nil {
			return err
		}
	}
	return nil
}
