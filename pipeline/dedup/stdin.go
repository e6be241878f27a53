package dedup

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/sniff"
	"github.com/infohash/infohash/internal/exitcode"
)

// keepWait bounds how long a stopped run waits for its spool's copy to
// end and make what it wrote durable (dataset.LiveSpool.Stop).
const keepWait = 10 * time.Second

// spoolStdin starts spooling stdin into the inbox and returns it as an
// input. An Arrow IPC stream or a hash list is read while it is spooled
// (the copy and its fsync overlap the aggregation: on a 1.1 GB stream they
// were half of the run); nothing read from it is committed before the
// spool is complete and durable, because the commit needs its checksum,
// which is only whole then. Parquet needs its footer, so it is spooled
// whole first, as is an input whose first bytes are bad (it is set aside
// whole).
func spoolStdin(ctx context.Context, inbox string, stdin io.Reader, data string) (input, error) {
	return spoolStream(ctx, inbox, "stdin", stdin, data)
}

// spoolStream is spoolStdin for any stream that can be read only once:
// stdin, or an input named by path that is a pipe ("dedup <(zcat
// list.gz)"), a FIFO or a character device. label names it in errors;
// data is the dataset's, for kindOf's hints.
func spoolStream(ctx context.Context, inbox, label string, stream io.Reader, data string) (input, error) {
	sum := xxh3.New()
	ls, err := dataset.StartSpool(inbox, ".spool", stream, sum)
	if err != nil {
		return input{}, fmt.Errorf("dedup: %s: %w", label, err)
	}
	name := label + " (" + ls.Path() + ")" // DIR joined as the user gave it
	var head [sniff.HeadSize]byte
	n, _ := io.ReadFull(ls.NewReader(ctx), head[:])
	who := name
	if n == 0 {
		who = label // an empty spool is not kept (setAside): name the stream
	}
	kind, kerr := kindOf(head[:n], who, "", data)
	// The spool stays locked until the run has committed it or given it
	// up (settleLive), so that no other run applies it as a leftover. A
	// stopped run keeps what was spooled durably before it exits.
	release := func() {
		if err := ls.Stop(keepWait); err != nil {
			slog.Warn("dedup: what "+label+" had sent is kept, but may not survive a power cut", "err", err.Error())
		}
	}
	if kerr == nil && kind != kindParquet && ctx.Err() == nil {
		return input{name: name, path: ls.Path(), kind: kind, inbox: true, spooled: label, live: ls, sum: sum, release: release}, nil
	}
	err = ls.Wait(ctx)
	if ctx.Err() != nil {
		release()
		if ls.EndedWhole() { // stopped as the spool was committed: it waits whole, a leftover the next run applies
			return input{}, dataset.KeptNote(ctx.Err(), "dedup", []dataset.SpooledInput{{From: label, Path: ls.Path()}})
		}
		if err != nil && kerr == nil && kind == kindParquet { // cut short: unreadable, Salvage sets it aside as bad
			return input{}, &dataset.UnreadableCut{Err: ctx.Err(), From: label, Dir: filepath.Dir(ls.Path())}
		}
		return input{}, ctx.Err() // what was read is Salvage's
	}
	if err != nil {
		release()
		return input{}, fmt.Errorf("dedup: %s: %w", label, err)
	}
	if kerr != nil {
		defer release()
		return input{}, setAside(input{name: who, path: ls.Path(), inbox: true}, kerr)
	}
	in, err := probe(ls.Path(), name, data)
	if err != nil {
		defer release()
		return input{}, setAside(input{name: name, path: ls.Path(), inbox: true}, err)
	}
	in.inbox, in.spooled, in.release = true, label, release
	return in, nil
}

// keptNote adds to err where the streams among ins that were spooled
// wait (dataset.KeptNote).
func keptNote(err error, ins []input) error {
	var spools []dataset.SpooledInput
	for _, in := range ins {
		if in.spooled != "" {
			spools = append(spools, dataset.SpooledInput{From: in.spooled, Path: in.path})
		}
	}
	return dataset.KeptNote(err, "dedup", spools)
}

// settleLive waits for the stdin spools among ins to end, so that what
// stdin held is in the inbox when a run stops (for the next run to
// apply), and releases their read handles and the locks the run holds
// on its spools and on the leftovers it took: a run calls it once it has
// committed them (and removed them) or given them up. After an interrupt
// it does not wait for the input: the release stops the copy, leaving a
// spool cut short for Salvage, made durable (dataset.LiveSpool.Stop, up
// to keepWait), and the lock goes only once the copy has ended, so that
// no other run takes a spool still written to; a copy that cannot end
// keeps it until the process exits.
func settleLive(ctx context.Context, ins []input) {
	for _, in := range ins {
		if in.live != nil {
			in.live.Wait(ctx)
		}
		if in.release != nil {
			in.release()
		}
	}
}

// open returns a reader of the input's content from its start: the live
// spool's for stdin still being spooled, else the file's.
func (in input) open(ctx context.Context) (io.ReadCloser, error) {
	if in.live != nil {
		return io.NopCloser(in.live.NewReader(ctx)), nil
	}
	return os.Open(in.path)
}

// spoolPipe opens the pipe, FIFO or device at path once and spools it
// (spoolStream); the file is closed when the spool has read it to its end.
func spoolPipe(ctx context.Context, inbox, path, data string) (input, error) {
	f, err := os.Open(path)
	if err != nil {
		return input{}, exitcode.BadInput(fmt.Errorf("dedup: %w", err))
	}
	return spoolStream(ctx, inbox, path, &closeAtEnd{f: f}, data)
}

// closeAtEnd closes f once a read of it fails or reaches its end.
type closeAtEnd struct{ f *os.File }

func (c *closeAtEnd) Read(p []byte) (int, error) {
	n, err := c.f.Read(p)
	if err != nil {
		c.f.Close()
	}
	return n, err
}
