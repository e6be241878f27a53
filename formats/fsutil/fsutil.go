// Package fsutil holds the crash-safe file primitives every writer in
// infohash uses: a file is written under a temporary name in its final
// directory, fsynced, closed, renamed into place, and the directory is
// fsynced, so a reader or a crash sees either the old file or the new one.
package fsutil

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// TempPrefix starts the name of every temporary file; readers and cleaners
// skip names that carry it.
const TempPrefix = ".tmp-"

// File is a file being written under a temporary name, or, from
// CreateOutput, a device or FIFO written in place.
type File struct {
	*os.File
	final  string
	done   bool
	direct bool // written in place: Commit and Abort only close
	// hold, when set, is a second handle on the temporary file holding a
	// shared flock(2) from before the file had its name until after
	// Commit or Abort took it away (CreateOutput's; see sweepOutputTemps).
	hold *os.File
	// busy is when the write under way to a file written in place
	// began (UnixNano; 0: none).
	busy atomic.Int64
	// output: from CreateOutput; Commit renames onto final only a
	// regular file or nothing (stillReplaceable).
	output bool
	// reserved is the size Reserve has allocated; noAlloc: the
	// filesystem has no fallocate(2).
	reserved int64
	noAlloc  bool
}

// Create opens a temporary file in path's directory that Commit will
// rename to path. A file of the dataset is read by other users too (its
// Parquet files by any query engine), so the file gets mode 0666 less the
// umask, as a new CreateOutput file does. The file holds a flock(2)
// while it is open, so that SweepTemps leaves it alone however long its
// writer pauses.
func Create(path string) (*File, error) {
	f, err := createUnheld(path)
	if err == nil {
		holdTemp(f.File)
	}
	return f, err
}

// createUnheld is Create without the lock (CreateLocked locks another
// handle, which a lock on this one would block).
func createUnheld(path string) (*File, error) {
	dir, base := filepath.Split(path)
	f, err := openTemp(dir, base)
	if err != nil {
		return nil, err
	}
	return &File{File: f, final: path}, nil
}

// holdTemp takes a shared flock(2) on a temporary file being written: it
// tells SweepTemps that its writer lives (the kernel drops the lock when
// the file is closed or the process dies). A file that cannot be locked
// is written all the same: the lock only guards against the sweep.
func holdTemp(f *os.File) {
	_ = unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB)
}

// Commit makes the written bytes durable and publishes them at the final
// path atomically. A file written in place is only closed.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("%s: already committed or aborted", f.final)
	}
	f.done = true
	defer f.release()
	if f.direct {
		if err := f.File.Close(); err != nil {
			return fmt.Errorf("%s: close: %w", f.final, err)
		}
		return nil
	}
	if err := f.rename(false); err != nil {
		return err
	}
	return SyncDir(dirOf(f.final))
}

// CommitKeeping is Commit for bytes that cannot be had again (a spool of
// a pipe): when the fsync, the close or the rename fails, the temporary
// file is not removed but left, closed, under its temporary name, which
// kept returns with the error, for the caller to set aside. kept is ""
// when nothing was left: the file was published (an error is then the
// directory's fsync's) or is written in place.
//
// An ordinary output keeps Commit's removal: its bytes come from inputs
// that are still there, so a later run writes them again, and a
// temporary file left under a hidden name would only be debris.
func (f *File) CommitKeeping() (kept string, err error) {
	if f.done || f.direct {
		return "", f.Commit()
	}
	f.done = true
	defer f.release()
	if err := f.rename(true); err != nil {
		return f.File.Name(), err
	}
	return "", SyncDir(dirOf(f.final))
}

// rename fsyncs and closes the temporary file and renames it onto the
// final path; on error the final path is unchanged, and the temporary
// file is removed unless keep is set.
func (f *File) rename(keep bool) error {
	drop := func() {
		if !keep {
			os.Remove(f.File.Name())
		}
	}
	if err := f.trimReserved(); err != nil {
		f.File.Close()
		drop()
		return err
	}
	if err := f.File.Sync(); err != nil {
		f.File.Close()
		drop()
		return fmt.Errorf("%s: fsync: %w", f.final, err)
	}
	if err := f.File.Close(); err != nil {
		drop()
		return fmt.Errorf("%s: close: %w", f.final, err)
	}
	if f.output {
		if err := stillReplaceable(f.final); err != nil {
			drop()
			return fmt.Errorf("%s: %w", f.final, err)
		}
	} else if k := Irregular(f.final); k != "" {
		drop()
		return &NotRegularError{Path: f.final, Kind: k}
	}
	if err := os.Rename(f.File.Name(), f.final); err != nil {
		drop()
		return err
	}
	return nil
}

// NotRegularError is the refusal of a rename onto a path that holds
// something other than a regular file (Irregular): Create's, CreateLocked's,
// WriteFile's and ReplaceFile's files are renamed only over a regular file
// or nothing. A FIFO, device, directory or symbolic link there (a user's
// mistake, or something planted) is left as it is, and the temporary file
// goes (CommitKeeping keeps it).
type NotRegularError struct {
	Path string // the final path
	Kind string // what is there: "a FIFO", "a directory", ...
}

// Error says what is at the path, and that it is left there.
func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file: left as it is (move it away)", e.Path, e.Kind)
}

// CheckRegular returns a *NotRegularError when path holds something other
// than nothing or a regular file (Irregular), for a reader that would
// block on a FIFO or follow a link where a writer's rename would refuse.
// It looks at the path only: a reader that then opens it opens what is
// there by then, so a reader opens with OpenRegular instead.
func CheckRegular(path string) error {
	if k := Irregular(path); k != "" {
		return &NotRegularError{Path: path, Kind: k}
	}
	return nil
}

// CheckRegularTarget is CheckRegular for a file that may be a symbolic
// link (DIR/policy.json, which "policy set" writes through a link): the
// link is followed, and what it leads to must be a regular file. nil
// when nothing is there.
func CheckRegularTarget(path string) error {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().IsRegular() {
		return nil
	}
	return &NotRegularError{Path: path, Kind: kindOf(fi.Mode())}
}

// inPlaceChunk bounds one write(2) to a file written in place, so that a
// reader that takes the data slowly but steadily is seen making progress
// (BlockedSince).
const inPlaceChunk = 64 << 10

// Write writes p. To a file written in place (a FIFO or device, whose
// reader may take nothing) it writes inPlaceChunk bytes at a time and
// notes when each write began, for BlockedSince. Only Write is watched:
// the writers of outputs (rowio, export) use nothing else.
func (f *File) Write(p []byte) (int, error) {
	if !f.direct {
		return f.File.Write(p)
	}
	n := 0
	for n < len(p) {
		f.busy.Store(time.Now().UnixNano())
		m, err := f.File.Write(p[n : n+min(len(p)-n, inPlaceChunk)])
		f.busy.Store(0)
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// BlockedSince returns when the write under way to a file written in
// place began: zero when none is, or the file is not written in place. A
// caller that must not wait for good on a reader that takes nothing
// (app's deliver, after a signal) polls it from another goroutine.
func (f *File) BlockedSince() time.Time {
	if ns := f.busy.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}

// InPlace reports whether the file is written in place (a device or
// FIFO from CreateOutput): what was written there cannot be taken back.
func (f *File) InPlace() bool { return f.direct }

// Abort discards the temporary file (a file written in place is only
// closed). It is a no-op after Commit.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.File.Close()
	if !f.direct {
		os.Remove(f.File.Name())
	}
	f.release()
}

// release drops the lock of hold, once the temporary name is gone.
func (f *File) release() {
	if f.hold != nil {
		f.hold.Close()
		f.hold = nil
	}
}

// SyncDir fsyncs a directory so that renames and creations in it are
// durable.
func SyncDir(dir string) error { return syncDirWith(os.Open, dir) }

// WriteFile writes data to path atomically and durably.
func WriteFile(path string, data []byte) error { return writeWith(Create, path, data) }

// ReplaceFile is WriteFile but for the fsync of the directory after the
// rename, which the caller does (SyncDir): it can then tell a failure
// that left path as it was (an error from ReplaceFile) from one after
// path was replaced, which a crash of the machine may yet undo (an error
// from SyncDir). A commit point needs the difference.
func ReplaceFile(path string, data []byte) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return err
	}
	f.done = true
	return f.rename(false)
}

// WriteFileIfAbsent writes data to path atomically and durably unless a
// file is already there, which it leaves alone (no lock needed: the
// temporary file is hard-linked into place, which fails if the name is
// taken). created reports whether this call made the file.
func WriteFileIfAbsent(path string, data []byte) (created bool, err error) {
	f, err := Create(path)
	if err != nil {
		return false, err
	}
	tmp := f.File.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return false, err
	}
	f.done = true
	if err := f.File.Sync(); err != nil {
		f.File.Close()
		return false, fmt.Errorf("%s: fsync: %w", path, err)
	}
	if err := f.File.Close(); err != nil {
		return false, fmt.Errorf("%s: close: %w", path, err)
	}
	if err := os.Link(tmp, path); err != nil {
		if os.IsExist(err) {
			return false, nil
		}
		return false, err
	}
	return true, SyncDir(dirOf(path))
}

// writeWith writes data to the file create opens for path and commits it.
func writeWith(create func(string) (*File, error), path string, data []byte) error {
	f, err := create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// ReadOnce reports whether a file of mode m gives its bytes only once: a
// pipe ("<(zcat list.gz)" names one), a FIFO or a character device. A
// reader that opens its input more than once must spool such a file first.
func ReadOnce(m fs.FileMode) bool { return m&(fs.ModeNamedPipe|fs.ModeCharDevice) != 0 }

// SyncFS flushes every dirty file and directory of the filesystem that
// holds dir (syncfs(2)): one call instead of an fsync per file when a
// commit has written hundreds of files.
func SyncFS(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := unix.Syncfs(int(d.Fd())); err != nil {
		return fmt.Errorf("%s: syncfs: %w", dir, err)
	}
	return nil
}

// StartWriteback asks the kernel to start writing f's dirty pages to disk
// now, without waiting (sync_file_range(2) SYNC_FILE_RANGE_WRITE). It
// makes nothing durable: a later SyncFS or fsync still must. A writer
// that stages many files calls it as each is finished, so their writeback
// overlaps the work on the next ones instead of piling up for the one
// syncfs at commit. Errors are ignored: it is only a hint.
func StartWriteback(f *os.File) {
	_ = unix.SyncFileRange(int(f.Fd()), 0, 0, unix.SYNC_FILE_RANGE_WRITE)
}

// staleTempAge is how old a temporary file must be before a sweep takes
// it for the debris of a killed writer: no writer of infohash keeps one
// open for that long without writing to it.
const staleTempAge = time.Hour

// SweepTemps removes the temporary files in dir whose name starts with
// TempPrefix+base ("" for any) and that nobody has modified for an hour:
// what a killed writer left (an export to FILE, a policy save). Errors are
// ignored: it is housekeeping. dir "" is the working directory (what
// filepath.Split gives for a bare name).
func SweepTemps(dir, base string) {
	if dir == "" {
		dir = "."
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := TempPrefix + base
	for _, e := range ents {
		if e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > staleTempAge {
			removeUnheld(filepath.Join(dir, e.Name()))
		}
	}
}

// removeUnheld removes the file at p unless a live writer holds it, or it
// is a CreateLocked file (a spool), whose exclusive lock also keeps it.
func removeUnheld(p string) {
	f, err := os.Open(p)
	if err != nil {
		return
	}
	defer f.Close()
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		return // held: its writer lives
	}
	os.Remove(p)
}
