package dedup

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/internal/exitcode"
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
// precheck of every later run. With peers (the run keeps announced
// peers) the page headers of node_addr and peer_port are checked too, as
// the read of a single input checks them at its open (readParquet).
func precheck(ctx context.Context, ins []input, peers bool) error {
	cols := obsColumns
	if peers {
		cols = obsPeerColumns
	}
	for _, in := range ins {
		if err := ctx.Err(); err != nil {
			return err
		}
		if in.kind != kindParquet || in.live != nil {
			continue
		}
		if err := precheckParquet(in, cols); err != nil {
			return setAside(in, exitcode.BadInput(fmt.Errorf("dedup: %s: %w", in.name, err)))
		}
	}
	return nil
}

func precheckParquet(in input, cols *parquet.Schema) (err error) {
	defer rowio.Recover(&err, "Parquet")
	f, err := os.Open(in.path)
	if err != nil {
		return err
	}
	defer f.Close()
	pf, err := rowio.OpenParquet(f, in.size, cols, rowio.DefaultLimits())
	if err != nil {
		return err
	}
	if err := checkObsSchema(pf.Schema()); err != nil {
		return fmt.Errorf("%w: %w", rowio.ErrSchema, err)
	}
	return nil
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
	return exitcode.With(exitcode.Partial, fmt.Errorf("%w (the inputs before it were applied in %d %s, up to snapshot %d; %s)",
		err, st.Commits, plural(st.Commits, "commit", "commits"), st.Snapshot, then))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
