package dedup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/internal/plural"
)

// precheck opens the footer of every Parquet input and checks its schema
// before anything is read or committed. A run whose inputs go into
// several commits (--batch-hashes) would otherwise find a truncated or
// foreign file only after committing the inputs before it; found here, it
// is bad input with nothing committed. Text lists and Arrow streams can
// only be checked by reading them whole: their faults are still found
// while reading (and a run that has committed by then exits partial).
// A spooled input it refuses (stdin, an inbox leftover) is set aside as
// reading it would set it aside: left in the inbox, it would fail the
// precheck of every later run. It checks the page headers of the columns
// the read takes (with peers, the run keeps announced peers, node_addr
// and peer_port too), as the read of a single input checks them at its
// open (readParquet), and returns what it checked by path: withChecked
// gives it to the inputs, whose read then does not check those again.
func precheck(ctx context.Context, ins []input, peers bool) (map[string]*pagesChecked, error) {
	cols := obsColumns
	if peers {
		cols = obsPeerColumns
	}
	checked := map[string]*pagesChecked{}
	for _, in := range ins {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if in.kind != kindParquet || in.live != nil {
			continue
		}
		fi, err := precheckParquet(in, cols)
		if err != nil {
			return nil, setAside(in, exitcode.BadInput(fmt.Errorf("dedup: %s: %w", in.name, err)))
		}
		checked[in.path] = &pagesChecked{cols: cols, file: fi}
	}
	return checked, nil
}

func precheckParquet(in input, cols *parquet.Schema) (fi os.FileInfo, err error) {
	defer rowio.Recover(&err, "Parquet")
	f, err := os.Open(in.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	pf, err := openParquet(f, in.size, cols, rowio.DefaultLimits())
	if err != nil {
		return nil, err
	}
	if err := checkObsSchema(pf, cols == obsPeerColumns); err != nil {
		return nil, fmt.Errorf("%w: %w", rowio.ErrSchema, err)
	}
	if err := parquetHiveError(in, pf); err != nil {
		return nil, fmt.Errorf("%w: %w", rowio.ErrSchema, err)
	}
	return fi, nil
}

// pagesChecked is what the precheck checked of a Parquet input: the page
// headers of the columns cols, in file (its identity, size and time).
type pagesChecked struct {
	cols *parquet.Schema
	file os.FileInfo
}

// withChecked is ins, each with what the precheck checked of it (checked,
// by path), if anything.
func withChecked(ins []input, checked map[string]*pagesChecked) []input {
	out := slices.Clone(ins)
	for i := range out {
		out[i].checked = checked[out[i].path]
	}
	return out
}

// openParquet is rowio.OpenParquetFold of the columns dedup reads (an
// INFO_HASH is info_hash, as DuckDB reads it); a test counts the page
// checks.
var openParquet = func(r io.ReaderAt, size int64, read *parquet.Schema, lim rowio.Limits) (*parquet.File, error) {
	return rowio.OpenParquetFold(r, size, read, obsNames, lim)
}

// obsNames are the columns dedup reads, by name.
var obsNames = rowio.Names(obsPeerColumns)

// openInput opens Parquet input in, open as f, for reading the columns
// read. It checks the page headers of those columns (rowio.OpenParquet)
// unless the precheck checked them in this very file (in.checked): then
// only the footer again, since the header checks of a large input cost
// about 0.1 s per 200 MB. A file changed since (another file at the
// path, another size or time) is checked in full.
func openInput(f *os.File, in input, read *parquet.Schema) (*parquet.File, error) {
	cols := read
	if c := in.checked; c != nil && c.cols == read {
		if fi, err := f.Stat(); err == nil && os.SameFile(fi, c.file) && fi.Size() == c.file.Size() && fi.ModTime().Equal(c.file.ModTime()) {
			cols = rowio.NoColumns
		}
	}
	return openParquet(f, in.size, cols, rowio.DefaultLimits())
}

// partialAfterCommits turns an error met after some of a run's commits
// into a partial outcome (exit 3): the inputs before the one at fault are
// applied and stay so, which "bad input, nothing committed" (exit 2) or
// "error" (exit 1) would deny. An interruption keeps its own status, and
// so does a failure after a commit point (exit 1, and it says what was
// committed).
func partialAfterCommits(err error, st Stats) error {
	if err == nil || st.Commits == 0 || exitcode.Of(err) == exitcode.Interrupted || errors.Is(err, ErrLeftOut) {
		return err
	}
	if _, ok := dataset.AsAfterCommit(err); ok {
		return err
	}
	// Only bad input is the input's fault; a full disk or a failed
	// write is not, and the same input re-run then applies.
	then := "re-run for the rest"
	if exitcode.Of(err) == exitcode.Usage {
		then = "fix or remove that input and re-run for the rest"
	}
	return exitcode.With(exitcode.Partial, fmt.Errorf("%w (the inputs before it were applied in %s, up to snapshot %d; %s)",
		err, plural.Count(st.Commits, "commit", "commits"), st.Snapshot, then))
}
