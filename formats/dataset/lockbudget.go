package dataset

import (
	"context"
	"sync"
	"time"
)

// A run's --lock-wait D bounds all its waits for the writer lock, not
// each: a writer that loses commit races takes the lock several times
// (each try's commit, then a try held under the lock, BeginAttempt), and
// each acquisition waited up to D, so a run could wait about 3 x D in all
// before it exited 75. WithLockWait puts the run's budget in its context;
// acquireLock waits at most what is left of it, and spends what it
// waited.

// lockBudget is what a run may still wait for the writer lock.
type lockBudget struct {
	mu   sync.Mutex
	left time.Duration
}

type lockBudgetKey struct{}

// WithLockWait returns ctx carrying a budget of wait for every wait for
// the writer lock made under it (Open's, each try's and commit's): they
// wait up to wait in all. A ctx that already carries a budget is
// returned as it is, so that a stage whose Run sets one and the Tries it
// runs share it.
func WithLockWait(ctx context.Context, wait time.Duration) context.Context {
	if budgetOf(ctx) != nil {
		return ctx
	}
	return context.WithValue(ctx, lockBudgetKey{}, &lockBudget{left: wait})
}

// budgetOf is ctx's lock budget, nil if none.
func budgetOf(ctx context.Context) *lockBudget {
	b, _ := ctx.Value(lockBudgetKey{}).(*lockBudget)
	return b
}

// bound returns wait, or what is left of the budget if less (0 at
// least). A nil budget bounds nothing.
func (b *lockBudget) bound(wait time.Duration) time.Duration {
	if b == nil {
		return wait
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return max(min(wait, b.left), 0)
}

// spend takes d, a time waited for the lock, from the budget.
func (b *lockBudget) spend(d time.Duration) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.left -= d
}
