package merge

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/sniff"
	"github.com/infohash/infohash/internal/exitcode"
)

// keepWait bounds how long a stopped merge waits for its spool's copy
// to end and make what it wrote durable (dataset.LiveSpool.Stop).
const keepWait = 10 * time.Second

// spoolHeld copies stream (from names it: "stdin", a pipe's path)
// durably into the inbox, holding the spool's lock until release is
// called, as dataset.SpoolHeld does, but stops when ctx ends (a second
// signal, or the stream's grace over while its writer holds it open):
// what was read is then kept durably under the spool's temporary name,
// which the next run sets aside (dataset.Salvage), and the error is
// ctx's: a dataset.UnreadableCut when the stream is Parquet, which cut
// short cannot be read (Salvage sets it aside as bad), as dedup says.
func spoolHeld(ctx context.Context, inbox, from string, stream io.Reader) (path string, release func(), err error) {
	ls, err := dataset.StartSpool(inbox, ".results", stream, nil)
	if err != nil {
		return "", nil, err
	}
	if err := ls.Wait(ctx); err != nil {
		if ctx.Err() == nil {
			ls.Close()
			return "", nil, err
		}
		// What was written is read as it is: ctx has ended, so the read
		// waits for no more.
		var head [sniff.HeadSize]byte
		n, _ := io.ReadFull(ls.NewReader(ctx), head[:])
		if err := ls.Stop(keepWait); err != nil {
			slog.Warn("merge: what the stream had sent is kept, but may not survive a power cut", "err", err.Error())
		}
		if ls.EndedWhole() { // stopped as the spool was committed: it waits whole, a leftover the next run applies
			return "", nil, dataset.KeptNote(ctx.Err(), "merge", []dataset.SpooledInput{{From: from, Path: ls.Path()}})
		}
		if sniff.Of(head[:n]) == sniff.Parquet {
			return "", nil, &dataset.UnreadableCut{Err: ctx.Err(), From: from, Dir: inbox}
		}
		return "", nil, ctx.Err()
	}
	return ls.Path(), func() { ls.Close() }, nil
}

// spoolPipe spools the pipe, FIFO or device at path into the inbox, as
// stdin is, and returns the spool as an input.
func spoolPipe(ctx context.Context, inbox, path string) (input, error) {
	f, err := os.Open(path)
	if err != nil {
		return input{}, exitcode.BadInput(fmt.Errorf("merge: %w", err))
	}
	defer f.Close()
	p, release, err := spoolHeld(ctx, inbox, path, f)
	if err != nil {
		return input{}, fmt.Errorf("merge: %s: %w", path, err)
	}
	return input{name: path, path: p, inbox: true, spooled: path, release: release}, nil // named as stdin is
}

// removeInbox deletes spooled inputs once they are applied (or were
// already).
func removeInbox(ins []input) {
	for _, in := range ins {
		if in.inbox {
			os.Remove(in.path)
		}
	}
}

// setAside moves a spooled input that failed out of the way of later
// runs (dataset.SetAside: renamed *.results.bad, or removed if empty) and
// says where it was kept in err, joined with --data as given (an empty
// one is removed, and the error names no file).
func setAside(in input, err error) error {
	kept, aerr := dataset.SetAside(in.path)
	switch {
	case aerr != nil:
		return err
	case kept == "": // empty, and the error says so
		return err
	}
	return fmt.Errorf("%w (set aside as %s)", err, kept)
}
