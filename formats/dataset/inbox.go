package dataset

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/sniff"
)

// Spool copies r durably into a new file with extension ext in the inbox
// folder dir (DIR/inbox or a stage's sub-folder), so that input read from
// a pipe survives a kill and can be applied by a later run. The file
// appears under its final name only once complete. Its lock is dropped on
// return: a run that applies the spool itself uses SpoolHeld.
func Spool(dir, ext string, r io.Reader) (string, error) {
	path, release, err := SpoolHeld(dir, ext, r)
	if release != nil {
		release()
	}
	return path, err
}

// SpoolHeld is Spool for the run that applies the spool: the spool's
// lock, held from its creation, is still held on return, so that another
// run starting meanwhile does not take the spool for a dead run's
// leftover (ClaimLeftover) and apply it too. The caller calls release
// once it has committed the spool (and removed it) or given it up; on
// error release is nil.
func SpoolHeld(dir, ext string, r io.Reader) (path string, release func(), err error) {
	if err := fsutil.MkdirAllSynced(dir, 0o755); err != nil {
		return "", nil, err
	}
	path = filepath.Join(dir, NewName(ext))
	// The lock is held while the copy runs and after the file has its
	// final name (the kernel drops it if this process dies): Salvage
	// leaves a locked spool alone, and so does a run looking for
	// leftovers. It is taken through a handle of its own, which outlives
	// the writing one (Commit closes that before the rename).
	f, lk, err := fsutil.CreateLocked(path)
	if err != nil {
		return "", nil, err
	}
	defer func() {
		if err != nil {
			lk.Close()
		}
	}()
	w := &spoolWriter{f: f}
	if _, err := io.Copy(w, r); err != nil {
		if w.err != nil {
			return "", nil, keepWritten(f, dir, err)
		}
		f.Abort()
		return "", nil, err
	}
	if err := commitSpool(f, dir); err != nil {
		return "", nil, err
	}
	return path, func() { lk.Close() }, nil
}

// commitSpool makes the whole spool f in the inbox folder dir durable
// under its final name. If its fsync fails, or its close or rename after
// the fsync, what was read is not thrown away, as Commit would (the
// stream will not send it again), but set aside whole (keepWhole), and
// the error says where. The caller holds the spool's lock.
func commitSpool(f *fsutil.File, dir string) error {
	if err := syncSpool(f); err != nil {
		f.Close()
		return keepWhole(f.Name(), dir, err, false)
	}
	kept, err := f.CommitKeeping()
	if kept != "" {
		return keepWhole(kept, dir, err, true)
	}
	return err
}

// syncSpool fsyncs spool f before its Commit (a variable for tests: to
// make the fsync fail, as a failing disk does).
var syncSpool = func(f *fsutil.File) error { return f.Sync() }

// keepWhole sets aside the whole spool at path (a temporary name in the
// inbox folder dir), closed, that could not be committed (serr): it is
// renamed, as it is, to PartialPrefix + a unique name (its extension as
// spoolKind tells), which no run applies on its own, and
// serr is returned saying where it is. synced tells a spool whose fsync
// succeeded (its close or rename failed), which is whole, from one whose
// fsync failed, which the disk may not hold all of. An empty one is
// removed.
func keepWhole(path, dir string, serr error, synced bool) error {
	r, err := fsutil.OpenRegular(path, os.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("%w; what was read could not be set aside (%v): it stays as %s, which the next run sets aside", serr, err, path)
	}
	kind, _, ext := spoolKind(r)
	var size int64
	if st, err := r.Stat(); err == nil {
		size = st.Size()
	}
	r.Close()
	if kind == sniff.Empty {
		os.Remove(path)
		return fmt.Errorf("%w; nothing was kept: nothing was written", serr)
	}
	final := filepath.Join(dir, PartialPrefix+NewName(ext))
	if err := os.Rename(path, final); err != nil {
		return fmt.Errorf("%w; what was read could not be set aside (%v): it stays as %s, which the next run sets aside", serr, err, path)
	}
	if err := fsutil.SyncDir(dir); err != nil {
		serr = fmt.Errorf("%w (and %v)", serr, err)
	}
	check := "its fsync failed, so check that it is whole, then apply it"
	if synced {
		check = "it is whole and was fsynced: apply it"
	}
	return fmt.Errorf("%w; all that was read is kept as %s (%d bytes), not applied: %s with the same command and "+
		"the file as input, unless the producer sends the input again", serr, final, size, check)
}

// spoolKind tells what the spool r holds from its first bytes (sniff.Of),
// its compression if it is compressed, and the extension of the name it
// is set aside under: .arrow, .parquet, a compressed one's (.gz, .zst,
// .bz2, .xz), else .txt (text, or binary that is none of these).
func spoolKind(r io.ReaderAt) (sniff.Kind, *sniff.Compression, string) {
	head := make([]byte, sniff.HeadSize)
	k, _ := r.ReadAt(head, 0)
	head = head[:k]
	switch kind := sniff.Of(head); kind {
	case sniff.Empty:
		return kind, nil, ""
	case sniff.Arrow:
		return kind, nil, ".arrow"
	case sniff.Parquet:
		return kind, nil, ".parquet"
	case sniff.Compressed:
		c := sniff.CompressionOf(head)
		return kind, c, c.Ext
	default:
		return kind, nil, ".txt"
	}
}

// spoolWriter writes to a spool and remembers a failed write, to tell it
// from a failed read.
type spoolWriter struct {
	f   *fsutil.File
	err error
}

func (w *spoolWriter) Write(p []byte) (int, error) {
	n, err := writeSpool(w.f, p)
	if err != nil {
		w.err = err
	}
	return n, err
}

// writeSpool writes p to spool f (a variable for tests: to fill the
// disk, which root's writes ignore chmod for).
var writeSpool = func(f *fsutil.File, p []byte) (int, error) { return f.Write(p) }

// keepWritten is what a spool does when writing to it fails (a full
// disk, an I/O error): what it read from a stream that will not give it
// again is not thrown away but set aside as Salvage sets aside a killed
// run's (setPartial), and werr is returned saying what was kept and
// where. f is the spool's temporary file in the inbox folder dir, whose
// lock the caller holds; it is closed.
func keepWritten(f *fsutil.File, dir string, werr error) error {
	defer f.Close()
	a, err := setPartial(f.File, dir, f.Name(), "")
	switch {
	case err != nil && a.path == "":
		return fmt.Errorf("%w; what was read could not be set aside (%v): it stays as %s, which the next run sets aside", werr, err, f.Name())
	case err != nil: // only the inbox folder's fsync failed
		werr = fmt.Errorf("%w (and %v)", werr, err)
	}
	switch {
	case a.bad:
		// Unlike a killed run's, left for a person to look at, this one
		// would only hold room on a disk that has none: a Parquet file
		// without its footer cannot be read.
		if rerr := os.Remove(a.path); rerr != nil {
			return fmt.Errorf("%w; what was read, %s, cannot be applied: set aside as %s", werr, a.what, a.path)
		}
		return fmt.Errorf("%w; nothing was kept: what was read is %s, which cannot be applied", werr, a.what)
	case a.path == "":
		return fmt.Errorf("%w; nothing was kept: %s", werr, a.what)
	}
	return fmt.Errorf("%w; what was read before is kept as %s (%d bytes: %s), not applied: once there is room, "+
		"apply it with the same command and the file as input, unless the producer sends the input again", werr, a.path, a.bytes, a.what)
}

// Pending keeps the inputs that snapshot m's ledger has not applied yet,
// and the first of several with the same content id.
func Pending[T any](d *Dataset, m *Manifest, ins []T, id func(T) string) ([]T, error) {
	ids := make([]string, len(ins))
	for i, in := range ins {
		ids[i] = id(in)
	}
	applied, err := d.AppliedAmong(m, ids)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []T
	for i, in := range ins {
		if k := ids[i]; !applied[k] && !seen[k] {
			seen[k] = true
			out = append(out, in)
		}
	}
	return out, nil
}

// PartialPrefix starts the name of a spool recovered by Salvage. Runs do
// not apply these on their own (see Salvage); an operator applies one
// like any input file.
const PartialPrefix = "partial-"

// Salvage recovers the spools in dir (extension ext) that a killed
// process left half-written, so that what it had read from its pipe is
// not lost: an Arrow IPC stream keeps its whole messages (closed with the
// end-of-stream marker), a text list its whole lines, a compressed stream
// all its bytes. The result is set aside as PartialPrefix + a unique name
// (.arrow, .txt, or a compressed one's such as .gz) and is not
// applied automatically: if the producer sends the whole input again (a
// re-run of the same command) the part would count twice; if it cannot
// (a pipe from a crawler), the operator applies the file. Each recovery
// is logged with the command to apply it.
//
// A spool still locked by a live writer is left alone, and so is an empty
// one less than a minute old that was not locked before it had a name
// (fsutil.CreateLocked); one with nothing whole in it is removed; one in
// another format (a Parquet file cut short cannot be read) is renamed
// with the suffix ".bad". It returns the paths
// of the spools it set aside.
func Salvage(dir, ext string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []string
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !strings.HasPrefix(name, fsutil.TempPrefix) || !strings.Contains(name, ext+"-") ||
			strings.HasSuffix(name, ".bad") { // a Parquet spool it set aside
			continue
		}
		p, err := salvage(dir, filepath.Join(dir, name), ext)
		if err != nil {
			return out, fmt.Errorf("dataset: salvaging %s: %w", filepath.Join(dir, name), err)
		}
		if p != "" {
			out = append(out, p)
		}
	}
	return out, nil
}

// emptySpoolGrace is how old an empty spool must be before Salvage takes
// it for debris rather than a spool whose writer is about to lock it.
const emptySpoolGrace = time.Minute

// salvage recovers one spool temp file; "" if there was nothing to keep
// or its writer is alive.
func salvage(dir, path, ext string) (string, error) {
	// Only a regular file: a FIFO there failed setPartial's seek (which
	// stopped every run), a link or device was removed as an empty
	// spool. Anything else is no run's spool, and left alone, as a
	// folder is (Salvage).
	f, err := fsutil.OpenRegular(path, os.O_RDWR, 0)
	var nr *fsutil.NotRegularError
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", nil // its writer committed or aborted meanwhile
	case errors.As(err, &nr):
		slog.Warn("dataset: no spool under a spool's temporary name; left alone", "file", path, "err", err)
		return "", nil
	case err != nil:
		return "", err
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return "", nil // a live writer
		}
		return "", err
	}
	// The lock is free, but the writer may have finished between the
	// open and the lock (its lock outlives the rename, but not its run):
	// a file no longer at path is a committed spool.
	if held, err := f.Stat(); err != nil {
		return "", err
	} else if now, err := os.Stat(path); err != nil || !os.SameFile(held, now) {
		return "", nil
	}
	if st, err := f.Stat(); err != nil {
		return "", err
	} else if st.Size() == 0 && !fsutil.LockedAtBirth(path) && time.Since(st.ModTime()) < emptySpoolGrace {
		// Empty, and not locked before it had a name: a spool created
		// an instant ago whose writer has not taken its lock yet, or
		// debris of a killed run, once old enough.
		return "", nil
	}
	a, err := setPartial(f, dir, path, "")
	switch {
	case err != nil:
		return "", err
	case a.bad:
		slog.Warn("dataset: a killed or stopped run's spool is a Parquet file cut short, unreadable without its footer: set aside as bad input, not applied (send it again)", "spool", a.path)
		return "", nil
	case a.path == "" && a.what == noWholeBatch:
		slog.Warn("dataset: a killed run's spool held no whole record batch; removed", "spool", path)
	case a.path != "":
		slog.Warn("dataset: a run was killed while reading its input from a pipe; what it had read is set aside, "+
			"not applied (a re-sent input would count it twice): apply it with the same command and the file "+
			"as input if the producer will not send it again", "file", a.path, "bytes", a.bytes)
	}
	return a.path, nil
}

// A cutSpool is what setPartial made of a spool cut short.
type cutSpool struct {
	path  string // where it is now: a PartialPrefix name, or (bad) the spool's + ".bad"; "" if removed
	bytes int64  // the bytes kept
	bad   bool   // a Parquet file cut short, which cannot be read: set aside as bad input
	what  string // what it holds, or (removed) why nothing was kept
}

// What a spool cut short holds, or why nothing of it was kept.
const (
	wholeBatches   = "whole record batches"
	wholeLines     = "whole lines"
	noWholeBatch   = "no whole record batch was written"
	noWholeLine    = "no whole line was written"
	nothingWritten = "nothing was written"
)

// setPartial keeps what can be applied of the spool f (named path in
// the inbox folder dir) that was cut short: an Arrow IPC stream keeps its
// whole messages and gets the end-of-stream marker, a text list its whole
// lines, a compressed stream all its bytes (what it holds up to the cut
// decompresses, before the decompressor's error; a text list's lines
// cannot be told in it); it is then made durable and renamed to name in
// dir, or if name is "", to PartialPrefix + a unique name (its extension
// as spoolKind tells). One with nothing whole in it is removed; a
// Parquet file is renamed with the suffix ".bad". The caller holds the
// spool's lock, or knows its writer is gone. f must be open for reading
// and writing; its offset is moved. An error with a path set is the
// inbox folder's fsync's, after the rename.
func setPartial(f *os.File, dir, path, name string) (cutSpool, error) {
	sk, c, kind := spoolKind(f)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return cutSpool{}, err
	}
	var keep int64
	var tail []byte
	what := wholeLines
	switch sk {
	case sniff.Empty:
		return cutSpool{what: nothingWritten}, os.Remove(path)
	case sniff.Compressed:
		n, err := f.Seek(0, io.SeekEnd)
		if err != nil {
			return cutSpool{}, err
		}
		keep, what = n, "the start of a "+c.Name+" stream, cut short"
	case sniff.Arrow:
		n, messages, err := rowio.ArrowPrefix(f, rowio.DefaultLimits())
		if err != nil {
			return cutSpool{}, err
		}
		if messages < 2 { // a schema alone holds no rows
			return cutSpool{what: noWholeBatch}, os.Remove(path)
		}
		keep, tail, what = n, []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}, wholeBatches
	case sniff.Parquet:
		if err := os.Rename(path, path+".bad"); err != nil {
			return cutSpool{}, err
		}
		return cutSpool{path: path + ".bad", bad: true, what: "a Parquet file cut short"}, nil
	default: // text, or binary: its whole lines
		n, err := lastLineEnd(f)
		if err != nil {
			return cutSpool{}, err
		}
		if n == 0 {
			return cutSpool{what: noWholeLine}, os.Remove(path)
		}
		keep = n
	}
	if err := f.Truncate(keep); err != nil {
		return cutSpool{}, err
	}
	if _, err := f.WriteAt(tail, keep); err != nil {
		return cutSpool{}, err
	}
	if err := f.Sync(); err != nil {
		return cutSpool{}, err
	}
	if name == "" {
		name = PartialPrefix + NewName(kind)
	}
	final := filepath.Join(dir, name)
	if err := os.Rename(path, final); err != nil {
		return cutSpool{}, err
	}
	return cutSpool{path: final, bytes: keep, what: what}, fsutil.SyncDir(dir)
}

// lastLineEnd is the length of r's content up to and including its last
// newline.
func lastLineEnd(r io.Reader) (int64, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var n, end int64
	for {
		line, err := br.ReadSlice('\n')
		n += int64(len(line))
		if err == nil {
			end = n
			continue
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			return end, nil
		}
		return end, err
	}
}
