package dataset

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// BeginRead starts a transaction that only reads the current snapshot
// (its Base and PolicyFile), on a dataset opened either way: it makes no
// staging folder, so it works where nothing may be written (a read-only
// copy or mount; plan-retries' dry run). Staging or committing on it
// fails; Abort ends it.
func (d *Dataset) BeginRead() (*Tx, error) {
	base, err := d.Current()
	if err != nil {
		return nil, err
	}
	return &Tx{d: d, base: base, next: base.clone(), staged: map[string]bool{}, dirty: map[string]bool{},
		policy: readPolicy(d.Dir), readOnly: true}, nil
}

// errNotWritable is wrapped by the error of a writer on a dataset it
// cannot write (notWritable).
var errNotWritable = errors.New("is not writable")

// IsNotWritable reports whether err is Open's (or a transaction's) on a
// dataset this process cannot write: a read-only file system, or a
// folder without write permission. A command that would commit nothing
// may then read it with OpenReadOnly instead.
func IsNotWritable(err error) bool { return errors.Is(err, errNotWritable) }

// checkWritable says plainly, before a writer does anything, that the
// dataset in d.Dir cannot be written (a read-only file system, or a
// folder without write permission for this user), naming the folder:
// otherwise the first sign would be a mkdir deep in staging/. It checks
// the folders every commit writes in: DIR, staging/, manifests/ and the
// tables' folders of m. access(2) may pass where a write still fails (a
// network file system's server decides): that write's error says so too
// (notWritable).
func (d *Dataset) checkWritable(m *Manifest) error {
	dirs := []string{d.Dir, d.Path("staging"), d.Path("manifests")}
	for name := range m.Tables {
		dirs = append(dirs, d.Path(name), d.Path(name, "v"))
	}
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue // made by the writer, in a folder checked here; or not a folder, which its mkdir says
		}
		if err := unix.Access(dir, unix.W_OK|unix.X_OK); err != nil {
			return d.notWritable(dir, err)
		}
	}
	return nil
}

// notWritable is err, a failure to write at path in the dataset, as the
// one line that says the dataset is not writable and where when err is
// EROFS, EACCES or EPERM; else err, unchanged.
func (d *Dataset) notWritable(path string, err error) error {
	var errno unix.Errno
	if !errors.As(err, &errno) || (errno != unix.EROFS && errno != unix.EACCES && errno != unix.EPERM) {
		return err
	}
	rel, rerr := filepath.Rel(d.Dir, path)
	where := ""
	if rerr == nil && rel != "." {
		where = " (" + rel + ")"
	}
	return fmt.Errorf("dataset %s %w%s: %v; a writer cannot commit there (status, export and plan-retries --limit 0 without -o only read it)",
		d.Dir, errNotWritable, where, errno)
}
