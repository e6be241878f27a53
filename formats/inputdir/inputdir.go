// Package inputdir lists the input files of a folder named as an input
// of dedup or merge: its Parquet files and Arrow IPC streams, in any
// case, at any depth. Both commands read a folder so, and say the same
// about what they skip.
package inputdir

import (
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/infohash/infohash/formats/fsutil"
)

// Exts are the names a folder named as an input contributes, in any
// case: Parquet, and Arrow IPC streams as capture and fetch write them
// (-o - > obs.arrows) and as dedup sets them aside (partial-*.arrow).
var Exts = []string{".parquet", ".arrows", ".arrow"}

// ExtsText lists Exts for messages and help.
const ExtsText = "*.parquet, *.arrows and *.arrow"

// List walks folder dir: files are those Exts names, temps the temporary
// files of writes in progress (fsutil.TempPrefix), others the rest, each
// in the order of the walk (lexical). A dir that is a symbolic link to a
// folder is walked as that folder (WalkDir would take the link for a
// file: the folder would go unread). An error names dir.
//
// A file named as Exts says that is not a regular file, nor a link to
// one (a FIFO, a socket, a device), is an error that names it, not dir:
// it can be read only once, or never (opening a FIFO that nobody writes
// to blocks), while a command reads its inputs more than once. List
// opens nothing: it stats such a file only, and no other.
func List(dir string) (files, others, temps []string, err error) {
	root := dir
	if fi, lerr := os.Lstat(dir); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
		root = dir + string(filepath.Separator)
	}
	var odd error
	err = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case e.IsDir():
		case strings.HasPrefix(e.Name(), fsutil.TempPrefix):
			temps = append(temps, p)
		case slices.ContainsFunc(Exts, func(x string) bool { return strings.EqualFold(filepath.Ext(p), x) }):
			if odd = notRegular(p, e); odd != nil {
				return fs.SkipAll
			}
			files = append(files, p)
		default:
			others = append(others, p)
		}
		return nil
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", dir, err)
	}
	if odd != nil {
		return nil, nil, nil, odd
	}
	return files, others, temps, nil
}

// notRegular is the error for entry e at p if it is neither a regular
// file nor a link to one; nil otherwise, and for a link that leads
// nowhere (the command's read says why). Only a link is stat'ed, and
// what the walk's directory read tells as something else.
func notRegular(p string, e fs.DirEntry) error {
	m := e.Type()
	if m.IsRegular() {
		return nil
	}
	if m&fs.ModeSymlink != 0 || m&fs.ModeIrregular != 0 {
		fi, err := os.Stat(p)
		if err != nil {
			return nil
		}
		m = fi.Mode()
	}
	if m.IsRegular() {
		return nil
	}
	return fmt.Errorf("%s: not a regular file (%s); a FIFO or device is read as a stream only when named as an input itself", p, FileKind(m))
}

// FileKind names what a file of mode m that is not a regular file is, for
// errors: "a pipe", "a device", "a socket".
func FileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a pipe"
	case m&fs.ModeCharDevice != 0, m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return m.Type().String()
}

// Files is List for command cmd ("dedup", "merge"), saying what it
// skips: the temporary files at debug level, the others in an info log
// line whose why says how to give such a file instead (a README.txt or
// a half-copied list must not fail a cron pass as bad input, nor be
// dropped unseen). A folder that holds no input file is nothing to do,
// not an error: one info line says so, and Files returns no files. An
// error is List's, after "cmd: ".
func Files(cmd, dir, why string) ([]string, error) {
	files, others, temps, err := List(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	if len(temps) > 0 {
		slog.Debug(cmd+": skipped temporary files of a folder (writes in progress)", "folder", dir, "skipped", len(temps), "files", SomeNames(temps))
	}
	switch {
	case len(files) == 0 && len(others) > 0:
		slog.Info(cmd+": "+dir+": no input files; nothing to apply", "reads", ExtsText, "skipped", len(others), "files", SomeNames(others))
	case len(files) == 0:
		slog.Info(cmd+": "+dir+": no input files; nothing to apply", "reads", ExtsText)
	case len(others) > 0:
		slog.Info(cmd+": skipped files of a folder that are not "+ExtsText, "folder", dir, "skipped", len(others),
			"files", SomeNames(others), "why", why)
	}
	return files, nil
}

// Empty reports whether dir is a folder (or a link to one) that holds no
// input file, without logging: false for anything else, and for a folder
// that cannot be walked (the command's own reading says why).
func Empty(dir string) bool {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return false
	}
	files, _, _, err := List(dir)
	return err == nil && len(files) == 0
}

// SomeNames lists the first few of names, for a log line.
func SomeNames(names []string) string {
	const few = 10
	if len(names) <= few {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:few], ", "), len(names)-few)
}
