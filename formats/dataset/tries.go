package dataset

import (
	"context"
	"log/slog"
	"time"
)

// Tries is a writer's loop of tries at one commit (Run): each try begins
// a transaction (BeginAttempt), does the stage's work on it and commits
// it; a try that another writer overtook (ErrConflict, from Commit or
// from a base snapshot collected while in use: Tx.Moved) is re-applied
// on the new snapshot, as Reapply decides.
type Tries struct {
	// Stage names the writer ("dedup", "merge --from"): the log lines
	// begin with it, a commit error for a damaged file gets it in front
	// (StageError), and the default commit records it as the manifest's
	// writer.
	Stage string
	// LockWait bounds all the tries' waits for the lock (BeginAttempt's,
	// the commits'), in all: the context's budget when it carries one
	// (WithLockWait), else a budget of LockWait for this Run.
	LockWait time.Duration
	Keep     int // the default commit's snapshots kept for readers
	// Collected is what the log says, after "Stage: ", of a try re-applied
	// because its base snapshot was collected while it read it ("": "the
	// snapshot being read was collected by later commits; starting over
	// on the new one"); Conflict, of a try re-applied because its commit
	// was a conflict ("": "dataset moved on while working; trying
	// again").
	Collected, Conflict string
	// Conflicts, if set, counts the tries re-applied (a stage's
	// CommitConflicts).
	Conflicts *int
	// Commit commits a try's transaction (nil: tx.Commit with LockWait,
	// Keep and Stage as the writer). It returns what Commit does: it may
	// return tx.Base() and no error to commit nothing.
	Commit func(ctx context.Context, tx *Tx) (*Manifest, error)
	// ReadOnly makes each try read only (BeginRead: no staging folder,
	// on a dataset opened either way); its Commit must commit nothing.
	ReadOnly bool
}

// A Try is the stage's work of one try on tx, its attempt-th (0 the
// first): it reads the stage's policy from tx (it may have changed since
// the last try), stages its changes in tx, and returns true to commit
// them. It returns false to stop with nothing to commit (nothing
// pending). An error stops the loop with it, unless it is a conflict: a
// try wraps an error met reading tx's base snapshot with tx.Moved, so
// that a base collected meanwhile re-applies the try. Run aborts tx after
// a try that returns false or an error.
type Try func(tx *Tx, attempt int) (commit bool, err error)

// Run runs tries on d until one commits (m, with after set if a step
// after the commit point failed: the snapshot is committed all the
// same), one stops with nothing to commit (nil, nil, nil), or one fails
// (err; nothing committed). A try overtaken by another writer is
// re-applied, up to MaxReapply times (then err is the locked error).
// Its waits for the lock take no more than LockWait in all: then err is
// the locked error.
func (o Tries) Run(ctx context.Context, d *Dataset, try Try) (m *Manifest, after *AfterCommitError, err error) {
	ctx = WithLockWait(ctx, o.LockWait) // one LockWait for all the tries' waits, or the stage's budget
	for attempt := 0; ; attempt++ {
		tx, err := o.begin(ctx, d, attempt)
		if err != nil {
			return nil, nil, err
		}
		commit, err := try(tx, attempt)
		if err != nil || !commit {
			tx.Abort()
			if retry, err := Reapply(err, attempt); retry {
				o.reapplied(o.Collected, "the snapshot being read was collected by later commits; starting over on the new one", attempt)
				continue
			} else {
				return nil, nil, err
			}
		}
		m, err := o.commit(ctx, tx)
		after, committed := AsAfterCommit(err)
		if retry, err := Reapply(err, attempt); retry {
			o.reapplied(o.Conflict, "dataset moved on while working; trying again", attempt)
			continue
		} else if err != nil && !committed {
			return nil, nil, StageError(o.Stage, err)
		}
		return m, after, nil
	}
}

// begin begins a try: BeginAttempt, or BeginRead when o.ReadOnly.
func (o Tries) begin(ctx context.Context, d *Dataset, attempt int) (*Tx, error) {
	if o.ReadOnly {
		return d.BeginRead()
	}
	return d.BeginAttempt(ctx, attempt, o.LockWait)
}

func (o Tries) commit(ctx context.Context, tx *Tx) (*Manifest, error) {
	if o.Commit != nil {
		return o.Commit(ctx, tx)
	}
	return tx.Commit(ctx, CommitOptions{LockWait: o.LockWait, Keep: o.Keep, Writer: o.Stage})
}

// reapplied counts a try re-applied and logs msg (def if empty).
func (o Tries) reapplied(msg, def string, attempt int) {
	if o.Conflicts != nil {
		*o.Conflicts++
	}
	if msg == "" {
		msg = def
	}
	slog.Info(o.Stage+": "+msg, "attempt", attempt+1)
}
