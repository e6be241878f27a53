package app

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/internal/exitcode"
)

// streamSync is how often capture and fetch fsync the file their -o -
// stream is redirected into ("capture -o - > FILE"). Each batch reaches
// the file as it is written (capture's within 200ms of its rows, fetch's
// within 1s), so a kill -9 loses only the batch under way; the fsync
// bounds what a machine crash loses to about this much more. An fsync
// per batch (capture: 5 a second per node) would cost a disk flush each
// for nothing a kill could lose.
const streamSync = time.Second

// streamHold is the lock and periodic fsync of the regular file that
// stdout is redirected to (fsutil.HoldStream), or of the -o FILE that
// openStreamOutput opened (own, closed with it); nil otherwise.
type streamHold struct {
	s    *fsutil.StreamFile
	own  *os.File
	made bool // own is a new file, removed if nothing was written to it
	// repl is the stream that replaces an existing -o FILE (--replace)
	// once it begins (own, s: nil).
	repl *fsutil.ReplacingStream
}

// holdStream locks and syncs stdout when out is "-" and stdout is a
// regular file: while the command writes into it, dedup and merge leave
// the file alone rather than apply a stream cut short and later the
// whole one. Another process holding its lock is exit 75.
func holdStream(cmd, out string, stdout io.Writer) (*streamHold, error) {
	if out != "-" {
		return nil, nil
	}
	return lockStream(cmd+": stdout", stdout)
}

// lockStream is holdStream of w, whatever out is; what begins its errors
// ("capture: stdout", "capture: -o").
func lockStream(what string, w io.Writer) (*streamHold, error) {
	s, err := fsutil.HoldStream(w, streamSync)
	if errors.Is(err, fsutil.ErrStreamHeld) {
		return nil, exitcode.With(exitcode.Locked, fmt.Errorf("%s: %w", what, err))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return &streamHold{s: s}, nil
}

// close fsyncs the file once more and drops its lock: nil, or the error
// of a failed fsync (exit 1: what reached the file may not be on disk).
// runErr is how the run ended: a new -o FILE of a run refused (exit 2:
// bad input; 75: its --dht-state in use), or that wrote nothing, is
// removed, as its Parquet file would not be kept, and the next run
// would refuse it as existing.
func (h *streamHold) close(cmd string, runErr error) error {
	if h == nil {
		return nil
	}
	if h.repl != nil {
		return h.closeReplacing(cmd, runErr)
	}
	if h.made {
		fi, err := h.own.Stat()
		if code := exitcode.Of(runErr); code == exitcode.Usage || code == exitcode.Locked || (err == nil && fi.Size() == 0) {
			os.Remove(h.own.Name())
		}
	}
	err := h.s.Close()
	if h.own != nil {
		if cerr := h.own.Close(); err == nil && cerr != nil {
			return fmt.Errorf("%s: %w", cmd, cerr)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", cmd, err) // it names the file
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: stdout: %w", cmd, err)
	}
	return nil
}

// isStreamName reports whether -o FILE names an Arrow IPC stream file:
// its name ends in .arrows or .arrow, in any case. capture and fetch write
// such a FILE as they write -o - redirected to it (openStreamOutput).
func isStreamName(out string) bool {
	ext := strings.ToLower(filepath.Ext(out))
	return out != "-" && (ext == ".arrows" || ext == ".arrow")
}

// openOutput opens the data output of capture or fetch (cmd) before the
// run: -o - is stdout, locked and synced by holdStream when it is a
// regular file. -o FILE named as an Arrow stream (isStreamName) is
// written as -o - redirected to it would be, the stage writing it as its
// stdout with "-" as its output: a regular file is opened here and
// returned as the stage's stdout; a FIFO or device (streamInPlace) is
// opened by the run under deliver (openInPlace). Any other -o FILE is
// the stage's to open (a Parquet file), after checkNotReplacing. The
// hold's close ends it all.
func openOutput(c *cli.Context, cmd string, stdout io.Writer) (io.Writer, string, *streamHold, error) {
	out := c.String("output")
	if streamInPlace(out) {
		return stdout, "-", nil, nil // not replaced: written as it is
	}
	if !isStreamName(out) {
		if err := checkNotReplacing(c); err != nil {
			return nil, "", nil, err
		}
		warnNotParquetName(cmd, out)
		hold, err := holdStream(cmd, out, stdout)
		return stdout, out, hold, err
	}
	f, hold, err := openStreamOutput(c, cmd, out)
	if err != nil {
		return nil, "", nil, err
	}
	return f, "-", hold, nil
}

// warnNotParquetName warns when -o FILE, which capture and fetch (cmd)
// write as Parquet, is named as another format export writes (obs.csv,
// results.jsonl): the name no longer says what the file holds. Other
// names (none, .parquet, obs.20261207) say nothing of the format.
func warnNotParquetName(cmd, out string) {
	if f, _ := formatForOutput(out); f != "" && f != "parquet" {
		slog.Warn(fmt.Sprintf("%s: -o %s names a %s file, but %s writes Parquet (an Arrow stream only to *.arrows or *.arrow): writing Parquet", cmd, out, f, cmd))
	}
}

// streamInPlace reports whether -o FILE names an Arrow stream
// (isStreamName) that is written in place: a FIFO, a device, or a link
// in /proc (fsutil.WrittenInPlace), which takes no Parquet file.
func streamInPlace(out string) bool { return isStreamName(out) && fsutil.WrittenInPlace(out) }

// withInPlace is run, a run under deliver of cmd, writing -o FILE as its
// stdout when FILE is an Arrow stream written in place (openInPlace).
func withInPlace(cmd, out string, run func(output) error) func(output) error {
	return func(dst output) error {
		dst, done, err := openInPlace(dst, out)
		if err != nil {
			return fmt.Errorf("%s: %w", cmd, err)
		}
		err = run(dst)
		if cerr := done(); err == nil && cerr != nil {
			err = fmt.Errorf("%s: %w", cmd, cerr)
		}
		return err
	}
}

// openInPlace is where a run under deliver writes -o FILE when FILE is
// an Arrow stream written in place (streamInPlace): FILE opened with
// dst.open, which deliver watches (a FIFO that no reader opens blocks
// it), as the stage's stdout; for any other output, dst as it is. done
// closes what it opened once the stage is done with it.
func openInPlace(dst output, out string) (output, func() error, error) {
	if !streamInPlace(out) {
		return dst, func() error { return nil }, nil
	}
	f, err := dst.open(out)
	if err != nil {
		return dst, nil, fmt.Errorf("%s: %w", out, err)
	}
	return output{stdout: f, open: dst.open}, f.Commit, nil
}

// openStreamOutput opens -o FILE, an Arrow stream file, as the shell does
// for "-o - > FILE", and holds it as holdStream does stdout: its lock
// (a second writer exits 75, leaving the first one's stream whole), and
// its fsync every streamSync. An existing FILE is refused (exit 2)
// unless --replace, which writes the stream beside it until its first
// batch (replaceStreamOutput); one another writer holds is exit 75
// either way (it is in use, not only there).
func openStreamOutput(c *cli.Context, cmd, out string) (io.Writer, *streamHold, error) {
	if who, busy := fsutil.Writing(out); busy {
		return nil, nil, exitcode.With(exitcode.Locked, fmt.Errorf("%s: -o %s: %w (%s): it is being written", cmd, out, fsutil.ErrStreamHeld, who))
	}
	if err := checkNotReplacing(c); err != nil {
		return nil, nil, err
	}
	exists := func() bool { _, err := os.Stat(out); return err == nil }
	if c.Bool("replace") && exists() {
		return replaceStreamOutput(cmd, out)
	}
	made := true
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if errors.Is(err, fs.ErrExist) && c.Bool("replace") {
		if exists() {
			return replaceStreamOutput(cmd, out) // made meanwhile
		}
		// A symbolic link to nothing yet: its target is made.
		made = false
		f, err = os.OpenFile(out, os.O_WRONLY|os.O_CREATE, 0o666)
	}
	if errors.Is(err, fs.ErrExist) { // made meanwhile: refused as checkNotReplacing would
		return nil, nil, exitcode.BadInput(fmt.Errorf("%s: -o %s exists: give --replace to write over it", cmd, out))
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", cmd, err)
	}
	hold, err := lockStream(cmd+": -o", f)
	if err != nil {
		f.Close()
		if made {
			os.Remove(out)
		}
		return nil, nil, err
	}
	hold.own, hold.made = f, made
	return f, hold, nil
}

// replaceStreamOutput opens -o FILE --replace where FILE exists: the
// stream is written beside it and replaces it only at its first batch
// (fsutil.ReplacingStream), or at the end of a run that wrote none but
// was not refused (closeReplacing). FILE's lock is taken now: another
// writer's is exit 75.
func replaceStreamOutput(cmd, out string) (io.Writer, *streamHold, error) {
	r, err := fsutil.ReplaceStream(out, streamSync)
	if errors.Is(err, fsutil.ErrStreamHeld) {
		return nil, nil, exitcode.With(exitcode.Locked, fmt.Errorf("%s: -o: %w", cmd, err))
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: -o: %w", cmd, err)
	}
	return r, &streamHold{repl: r}, nil
}

// closeReplacing is close of a stream replacing -o FILE: one that has
// not begun replaces FILE now if the run went through (exit 0, 3 or
// 130: an empty stream is its output), and is discarded otherwise (a run
// refused or failed before its first batch leaves FILE as it was).
func (h *streamHold) closeReplacing(cmd string, runErr error) error {
	var err error
	switch code := exitcode.Of(runErr); {
	case h.repl.Started():
	case runErr == nil || code == exitcode.Partial || code == exitcode.Interrupted:
		if serr := h.repl.Start(); serr != nil {
			err = fmt.Errorf("%s: %s: %w", cmd, h.repl.Name(), serr)
		}
	default:
		h.repl.Discard()
	}
	if cerr := h.repl.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("%s: %w", cmd, cerr) // it names the file
	}
	return err
}
