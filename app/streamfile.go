package app

import (
	"errors"
	"fmt"
	"io"
	"time"

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
// stdout is redirected to (fsutil.HoldStream); nil otherwise.
type streamHold struct{ s *fsutil.StreamFile }

// holdStream locks and syncs stdout when out is "-" and stdout is a
// regular file: while the command writes into it, dedup and merge leave
// the file alone rather than apply a stream cut short and later the
// whole one. Another process holding its lock is exit 75.
func holdStream(cmd, out string, stdout io.Writer) (*streamHold, error) {
	if out != "-" {
		return nil, nil
	}
	s, err := fsutil.HoldStream(stdout, streamSync)
	if errors.Is(err, fsutil.ErrStreamHeld) {
		return nil, exitcode.With(exitcode.Locked, fmt.Errorf("%s: stdout: %w", cmd, err))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: stdout: %w", cmd, err)
	}
	return &streamHold{s: s}, nil
}

// close fsyncs the file once more and drops its lock: nil, or the error
// of a failed fsync (exit 1: what reached the file may not be on disk).
func (h *streamHold) close(cmd string) error {
	if h == nil {
		return nil
	}
	if err := h.s.Close(); err != nil {
		return fmt.Errorf("%s: stdout: %w", cmd, err)
	}
	return nil
}
