package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// syncParent fsyncs the folder a folder was made in (a variable for
// tests: an fsync cannot be seen from the file system).
var syncParent = func(dir string) error { return syncDirWith(openParent, dir) }

// openParent opens a folder to fsync it (a variable for tests: root opens
// a folder it may not read all the same).
var openParent = os.Open

// MkdirAllSynced is os.MkdirAll made durable: each folder it creates has
// its entry in its parent fsynced before it returns, parents first, so
// that a power cut cannot lose a folder (and what is later renamed into
// it, which may reach the disk first) once it returned. Folders that were
// there are left alone, and cost one stat. A parent that may be written
// and searched but not read (mode 0300) cannot be opened to fsync it:
// the folder is made all the same, with one WARN line saying that its
// entry may not survive a power cut.
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
		err := syncParent(parentOf(made[i]))
		if pe, ok := errors.AsType[*fs.PathError](err); ok && pe.Op == "open" && errors.Is(err, syscall.EACCES) {
			slog.Warn("a new folder's entry may not survive a power cut: its parent folder cannot be opened to fsync it",
				"folder", made[i], "err", err.Error())
			continue
		}
		if err != nil {
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

// syncDirWith is SyncDir opening dir with open.
func syncDirWith(open func(string) (*os.File, error), dir string) error {
	d, err := open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("%s: fsync dir: %w", dir, err)
	}
	return nil
}
