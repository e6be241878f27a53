package fsutil

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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
	for p := dir; p != ""; {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		made = append(made, p)
		up := parentOf(p)
		if up == p {
			break
		}
		p = up
	}
	if err := os.MkdirAll(dir, perm); err != nil {
		return err
	}
	for i := len(made) - 1; i >= 0; i-- {
		if err := syncParent(parentOf(made[i])); err != nil {
			return err
		}
	}
	return nil
}

// parentOf is the folder p is in, as os.MkdirAll walks up to it: p up to
// its last separator, not cleaned, so that a ".." after a symbolic link
// to a folder means what the kernel takes it to, the link's target's
// parent (filepath.Dir would drop the link and its ".." both, and name
// another folder, or none).
func parentOf(p string) string {
	p = strings.TrimRight(p, string(filepath.Separator))
	i := strings.LastIndexByte(p, filepath.Separator)
	switch {
	case p == "":
		return string(filepath.Separator)
	case i < 0:
		return "."
	case strings.TrimRight(p[:i], string(filepath.Separator)) == "":
		return string(filepath.Separator)
	}
	return strings.TrimRight(p[:i], string(filepath.Separator))
}
