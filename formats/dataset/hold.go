package dataset

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// HoldLockAfter is how many races a writer that may wait for the lock
// loses before it holds the lock through a whole try (BeginAttempt).
const HoldLockAfter = 2

// BeginAttempt begins a writer's attempt-th try at its work (0 the
// first; the loop that re-applies on ErrConflict counts them, as Reapply
// does). The first HoldLockAfter tries are Begin: the lock is taken only
// to publish. A writer with a lock wait (wait > 0) that lost that many
// races takes the writer lock first, waiting up to wait (then ErrLocked),
// and the transaction holds it through Commit, which publishes under it,
// or Abort, which releases it: no other writer can commit meanwhile, so
// the try cannot lose again. Without a wait every try is Begin, and the
// writer gives up after MaxReapply lost races.
func (d *Dataset) BeginAttempt(ctx context.Context, attempt int, wait time.Duration) (*Tx, error) {
	if attempt < HoldLockAfter || wait <= 0 {
		return d.Begin()
	}
	slog.Info("dataset: lost the race to commit; holding the writer lock through the next try",
		"dir", d.Dir, "lost", attempt, "lock_wait", wait)
	l, err := acquireLock(ctx, d.Dir, wait)
	if err != nil {
		return nil, fmt.Errorf("%w (after %d commits lost to other writers)", err, attempt)
	}
	tx, err := d.Begin()
	if err != nil {
		l.Release()
		return nil, err
	}
	tx.lock = l
	return tx, nil
}
