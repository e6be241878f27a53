package dedup

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/formats/inputdir"
	"github.com/infohash/infohash/formats/sniff"
	"github.com/infohash/infohash/internal/exitcode"
)

// inputKind is what an input file holds, detected from its content.
type inputKind int

const (
	kindParquet inputKind = iota
	kindArrow
	kindText
)

func (k inputKind) String() string { return [...]string{"parquet", "arrow", "text"}[k] }

// format names the kind in errors about corrupt input.
func (k inputKind) format() string {
	return [...]string{"Parquet", "Arrow IPC stream", "hash list"}[k]
}

// input is one file to apply.
type input struct {
	name  string // as the user named it (stdin inputs: "stdin (DIR/inbox/…)", DIR as given)
	path  string
	id    string // content checksum
	size  int64
	kind  inputKind
	inbox bool // spooled: removed once applied
	// spooled names the stream this run spooled the input from (stdin,
	// or a pipe's path); "" for a file.
	spooled string

	// live is stdin still being spooled (Arrow streams and hash lists
	// are read as they arrive); sum is its checksum, computed as it is
	// copied. Both nil for files.
	live *dataset.LiveSpool
	sum  *xxh3.Hasher
	// release drops the lock the run holds on a spool in the inbox,
	// its own (from its creation) or a leftover it took
	// (dataset.ClaimLeftover), once it has committed it or given it up
	// (settleLive); nil for other inputs.
	release func()
	// checked is what the precheck checked of the input, nil if nothing:
	// its read need not check it again (openInput).
	checked *pagesChecked
}

// resolveInputs expands folders, spools stdin into the inbox and picks up
// inbox files a killed run left behind. The files that cache (nil: none)
// knows unchanged come with their id set, unopened. A file that a stream
// is still being written into (its writer holds its lock:
// fsutil.Writing) is left out, before it is even looked at, and named in
// busy: applied now, and again once whole, its rows would count twice.
//
// Stdin is read while it is spooled (see spoolStdin). If resolveInputs
// fails, it first lets that spool finish, so that what stdin held waits
// in the inbox for the next run, as if it had been spooled whole first.
func resolveInputs(ctx context.Context, args []string, stdin io.Reader, d *dataset.Dataset, cache *inputCache) (out []input, busy []string, err error) {
	inbox := d.Path("inbox")
	defer func() {
		if err != nil {
			settleLive(ctx, out)
			out = nil
		}
	}()
	stdins := 0
	for _, a := range args {
		if a == "-" {
			stdins++
		}
	}
	if stdins > 1 {
		return nil, nil, exitcode.BadInput(errors.New("dedup: - (stdin) named more than once"))
	}
	for _, a := range args {
		if a == "-" {
			in, err := spoolStdin(ctx, inbox, stdin, d.Dir)
			if err != nil {
				return out, busy, err
			}
			out = append(out, in)
			continue
		}
		st, err := os.Stat(a)
		if err != nil {
			return out, busy, exitcode.BadInput(fmt.Errorf("dedup: %w", err))
		}
		if fsutil.ReadOnce(st.Mode()) {
			// Readable once: spooled like stdin, then read from the inbox.
			in, err := spoolPipe(ctx, inbox, a, d.Dir)
			if err != nil {
				return out, busy, err
			}
			out = append(out, in)
			continue
		}
		if !st.IsDir() {
			in, ok, err := cache.probeUnlessWritten(a, d.Dir, &busy)
			if err != nil {
				return out, busy, err
			}
			if !ok {
				continue
			}
			// A partial input set aside in the inbox is removed once
			// applied, as a spool is: status lists it until then.
			in.inbox = dataset.IsPartial(inbox, a)
			out = append(out, in)
			continue
		}
		files, err := folderFiles(a)
		if err != nil {
			return out, busy, err
		}
		sort.Strings(files)
		for _, p := range files {
			in, ok, err := cache.probeUnlessWritten(p, d.Dir, &busy)
			if err != nil {
				return out, busy, err
			}
			if !ok {
				continue
			}
			out = append(out, in)
		}
	}
	// Spooled input of earlier runs that died before applying it (not
	// those of live runs: dataset.ClaimLeftover). What a run killed while
	// spooling had read is set aside (dataset.Salvage).
	if _, err := dataset.Salvage(inbox, ".spool"); err != nil {
		return out, busy, fmt.Errorf("dedup: %w", err)
	}
	ents, _ := os.ReadDir(inbox)
	for _, e := range ents {
		if !dataset.IsSpool(e, ".spool") { // only a run's own spools: no other file there is taken
			continue
		}
		p := filepath.Join(inbox, e.Name())
		if containsPath(out, p) {
			continue
		}
		// A live run's spool (its own run applies it) or a leftover
		// another run is applying is locked: left alone.
		release, ok, err := dataset.ClaimLeftover(p)
		if err != nil {
			slog.Warn("dedup: a leftover in the inbox cannot be locked; left for a later run", "file", p, "err", err)
			continue
		}
		if !ok {
			continue
		}
		in, err := cache.probe(p, "leftover "+p, d.Dir)
		if err != nil {
			// A leftover that cannot be read must not block new input forever.
			dataset.SetAside(p)
			release()
			continue
		}
		in.inbox, in.release = true, release
		out = append(out, in)
	}
	return out, busy, nil
}

// probeUnlessWritten is c.probe for a file named as INPUT (or found in a
// folder named so), unless a stream is still being written into it
// (fsutil.Writing: its writer holds its lock): then it notes the file in
// busy and returns ok false. The check comes before the file is read
// (a stream just begun is empty, which probe refuses), and after the
// cache: a file the cache knows unchanged is not opened at all, and was
// read whole once, its writer done.
func (c *inputCache) probeUnlessWritten(path, data string, busy *[]string) (in input, ok bool, err error) {
	if c != nil {
		if e, hit := c.lookup(path); hit {
			return input{name: path, path: path, id: e.ID, size: e.Size, kind: e.Kind}, true, nil
		}
	}
	if who, writing := fsutil.Writing(path); writing {
		*busy = append(*busy, fmt.Sprintf("%s: still being written by %s", path, who))
		return input{}, false, nil
	}
	in, err = probe(path, path, data)
	return in, err == nil, err
}

// folderFiles lists the input files under folder dir: those named as
// inputdir.Exts says. A folder is read for those only: the other files in
// it are skipped, since a README.txt or a half-copied list would
// otherwise fail a cron pass as bad input, and named in an info log line
// so that a text list put there by mistake is not dropped unseen.
// Temporary files of writes in progress are skipped too, at debug level.
// A file in it is then read as a file named as INPUT is (its content
// tells its kind; one a stream is still written into is skipped, one cut
// mid-message applied up to the cut).
//
// A folder that holds none is nothing to do, not bad input (a cron pass
// over a folder no capture has finished writing to yet): folderFiles
// logs one info line that says so and returns no files, no error.
func folderFiles(dir string) ([]string, error) {
	files, err := inputdir.Files("dedup", dir, "a folder is read for its Parquet and Arrow files; name a text list as an input of its own")
	if err != nil {
		return nil, exitcode.BadInput(err)
	}
	return files, nil
}

func containsPath(ins []input, p string) bool {
	for _, in := range ins {
		if in.path == p {
			return true
		}
	}
	return false
}

// probe detects an input's kind from its first bytes (data is the
// dataset's, for kindOf's hints). Its content checksum (the id) comes
// later, from checksumAll.
func probe(path, name, data string) (input, error) {
	// An input is opened more than once (here for its kind, then to read
	// and to checksum it): a pipe or device would give each open other
	// bytes, and opening a FIFO no one writes to blocks. Those named as
	// INPUT are spooled first (spoolPipe); anything else that is not a
	// regular file (a socket, a FIFO in a folder) is refused.
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return input{}, exitcode.BadInput(fmt.Errorf("dedup: %s: not a regular file (%s)", name, inputdir.FileKind(fi.Mode())))
	}
	f, err := os.Open(path)
	if err != nil {
		return input{}, exitcode.BadInput(fmt.Errorf("dedup: %w", err))
	}
	defer f.Close()
	var head [sniff.HeadSize]byte
	n, _ := io.ReadFull(f, head[:])
	st, err := f.Stat()
	if err != nil {
		return input{}, fmt.Errorf("dedup: %s: %w", name, err)
	}
	kind, err := kindOf(head[:n], name, path, data)
	if err != nil {
		return input{}, err
	}
	return input{name: name, path: path, size: st.Size(), kind: kind}, nil
}

// kindOf tells an input's kind from its first bytes (up to
// sniff.HeadSize; none is an empty input, which a stream's error says
// came through a pipe, as merge and fetch say it). A compressed input is
// refused (compressedError; path is the file's, "" for a stream; data the
// dataset's, for the hint).
func kindOf(head []byte, name, path, data string) (inputKind, error) {
	switch sniff.Of(head) {
	case sniff.Empty:
		return 0, exitcode.BadInput(fmt.Errorf("dedup: %s: empty input%s", name, sniff.EmptyHint(path == "")))
	case sniff.Compressed:
		return 0, compressedError(sniff.CompressionOf(head), name, path, data)
	case sniff.Parquet:
		return kindParquet, nil
	case sniff.Arrow:
		return kindArrow, nil
	case sniff.Binary:
		return 0, exitcode.BadInput(fmt.Errorf("dedup: %s: neither Parquet, an Arrow IPC stream nor a text hash list", name))
	}
	// A file named as Parquet or Arrow that holds text is damage (or
	// the wrong file), not a hash list: its lines would each fail as a
	// hash, or worse, some read as one.
	switch strings.ToLower(filepath.Ext(path)) {
	case ".parquet":
		return 0, exitcode.BadInput(fmt.Errorf("dedup: %s: not a Parquet file (no PAR1 magic; it starts with text)", name))
	case ".arrows", ".arrow":
		return 0, exitcode.BadInput(fmt.Errorf("dedup: %s: not an Arrow IPC stream (no continuation marker; it starts with text)", name))
	}
	return kindText, nil
}

// checksums are the content checksums of a run's inputs, computed in the
// background while the inputs are read.
type checksums struct {
	done chan struct{}
	ids  []string
	err  error
	// ctx ends when the run stops waiting for the checksums (halt).
	ctx  context.Context
	stop context.CancelFunc
	// fresh are the cache entries of the files read for their checksum
	// (those clean enough to cache: see inputCache).
	fresh []cacheEntry
}

// checksumAll starts checksumming ins (xxh3-128 of the whole content, in
// order, one file at a time) and returns at once. An input whose id is
// set already (from the input cache) is not read.
func checksumAll(ins []input) *checksums {
	c := &checksums{done: make(chan struct{}), ids: make([]string, len(ins))}
	c.ctx, c.stop = context.WithCancel(context.Background())
	ins = slices.Clone(ins)
	go func() {
		defer close(c.done)
		start := time.Now()
		buf := make([]byte, checksumBuffer)
		cached := 0
		for i, in := range ins {
			if in.live != nil {
				// Summed as it was copied: the sum is whole once the
				// spool is.
				if err := in.live.Wait(c.ctx); err != nil {
					c.err = fmt.Errorf("dedup: stdin: %w", err)
					return
				}
				sum := in.sum.Sum128().Bytes()
				c.ids[i] = hex.EncodeToString(sum[:])
				continue
			}
			if in.id != "" {
				c.ids[i] = in.id
				cached++
				continue
			}
			var e *cacheEntry
			if c.ids[i], e, c.err = checksumFile(c.ctx, in, buf); c.err != nil {
				return
			}
			if e != nil {
				c.fresh = append(c.fresh, *e)
			}
		}
		// Not a step before the read: it ran while the first read did
		// (readWhileChecksumming), its seconds overlapping that read's.
		slog.Debug("dedup: inputs checksummed alongside the read", "inputs", len(ins), "from_cache", cached, "seconds", time.Since(start).Seconds())
	}()
	return c
}

// checksumBuffer is the read size of checksumming: 32 KiB reads (io.Copy's)
// took a third longer on a 370 MB file than 1 MiB ones.
const checksumBuffer = 1 << 20

// wait returns the checksums, in the order of the inputs, once computed.
// The slice is shared: callers must not change it.
func (c *checksums) wait() ([]string, error) {
	<-c.done
	return c.ids, c.err
}

// withIDs returns a copy of ins with their ids set from ids.
func withIDs(ins []input, ids []string) []input {
	out := slices.Clone(ins)
	for i := range out {
		out[i].id = ids[i]
	}
	return out
}

// checksumFile is the content checksum of input file in, as hex: its
// xxh3-128, dedup's ledger id (fixed for good: see dataset.Applied). e is
// its entry for the input cache, nil unless the file was the same (fstat)
// before and after it was read, and clean (cacheEntry.clean).
func checksumFile(ctx context.Context, in input, buf []byte) (id string, e *cacheEntry, err error) {
	at := time.Now()
	f, err := os.Open(in.path)
	if err != nil {
		return "", nil, fmt.Errorf("dedup: %s: %w", in.name, err)
	}
	defer f.Close()
	before, berr := f.Stat()
	h := xxh3.New()
	// Wrapped, so that neither side's ReadFrom/WriteTo replaces buf.
	if _, err := io.CopyBuffer(struct{ io.Writer }{h}, stopReader{ctx, f}, buf); err != nil {
		return "", nil, fmt.Errorf("dedup: %s: %w", in.name, err)
	}
	sum := h.Sum128().Bytes()
	id = hex.EncodeToString(sum[:])
	after, aerr := f.Stat()
	abs, perr := filepath.Abs(in.path)
	if berr != nil || aerr != nil || perr != nil {
		return id, nil, nil
	}
	k1, ok1 := statEntry(abs, before)
	k2, ok2 := statEntry(abs, after)
	if !ok1 || !ok2 || !k1.sameFile(k2) {
		return id, nil, nil
	}
	k1.ID, k1.Kind, k1.At = id, in.kind, at.UnixNano()
	if !k1.valid() || !k1.clean() {
		return id, nil, nil // changed too lately to trust (or empty): read again next run
	}
	return id, &k1, nil
}

// current fills st's state_rows and snapshot from d's latest commit, for
// a run that applies nothing (every input skipped, still being written):
// its summary line said state_rows=0 snapshot=0 of a dataset that has
// rows.
func current(st Stats, d *dataset.Dataset) Stats {
	if m, err := d.Current(); err == nil {
		if t := m.Table(dataset.TableState); t != nil {
			st.StateRows = t.Rows()
		}
		st.Snapshot = m.Snapshot
	}
	return st
}

// ledgerName is in's name as the ledger records it: its paths made
// absolute (dataset.AbsName), the pipe's as well as the spool's; stdin's
// label is a word, not a path.
func ledgerName(in input) string {
	label := in.spooled
	if label == "stdin" {
		label = ""
	}
	return dataset.AbsName(in.name, label, in.path)
}
