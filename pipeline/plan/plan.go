package plan

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/formats/leases"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/pipeline/schedule"
)

// Options configure a plan-retries run.
type Options struct {
	Data     string        // dataset directory
	Output   string        // jobs file, "-" for an Arrow stream on Stdout, or "" for none (Limit 0 only: a dry run)
	Stdout   io.Writer     // written for "-"
	Now      time.Time     // the planning time
	Limit    int           // at most this many jobs (0: a dry run, counting what a pass would find due)
	NewShare *float64      // least share of Limit for new hashes (nil: the policy's)
	Lease    time.Duration // lease length (0: the policy's)
	Seed     *uint64       // tie-break seed (nil: the policy's)
	Keep     int           // snapshots kept for readers
	LockWait time.Duration // wait for the writer lock instead of failing
	Workers  int           // partitions scanned in parallel
	// Replace lets the run write over a jobs file at Output whose jobs
	// are still leased (not yet fetched and merged), ending those leases;
	// without it such a run is refused (exit 2). See replaced.
	Replace bool
	// OpenOutput opens Output when it is a file (nil:
	// fsutil.CreateOutput), so that the caller can watch a FIFO or
	// device that blocks.
	OpenOutput fsutil.Opener
	// ProgressTo receives a progress bar (terminal) or periodic log
	// lines of the scan of the partitions (nil: none).
	ProgressTo io.Writer
	// Committed, if set, is called with the run's counters once the
	// leases are committed, before the jobs are written to stdout (or a
	// FIFO or device): a caller that gives up on a stalled stdout can
	// still say what stays leased.
	Committed func(Stats)
}

// DefaultOptions returns the defaults: 10,000 jobs, the policy's shares,
// lease and seed, the wall clock.
func DefaultOptions() Options {
	return Options{Output: "-", Stdout: os.Stdout, Now: time.Now().UTC(), Limit: 10000, Keep: 3,
		Workers: runtime.GOMAXPROCS(0)}
}

// Stats are plan-retries' counters.
type Stats struct {
	Scanned            int64   `json:"hot_rows_scanned"`
	ColdScanned        int64   `json:"cold_rows_scanned"`
	ColdInHot          int64   `json:"cold_rows_in_hot_files"` // archived in place by merge, read every pass
	Fetched            int64   `json:"fetched"`
	NotDue             int64   `json:"not_due"`
	Leased             int64   `json:"under_live_lease"`
	Blocked            int64   `json:"blocklisted"`
	Due                int64   `json:"due"`
	DueNew             int64   `json:"due_new"`
	DueRetry           int64   `json:"due_retry"`
	DueCold            int64   `json:"due_cold"`
	DueUnplanned       int64   `json:"due_unplanned"` // due less planned: left for later passes (a backlog if far above Limit pass after pass)
	Planned            int     `json:"planned"`
	PlannedNew         int     `json:"planned_new"`
	PlannedNewOverdue  int     `json:"planned_new_overdue"` // of planned_new, by the overdue reserve (plan.new_overdue_share)
	PlannedRetry       int     `json:"planned_retry"`
	PlannedReactivated int     `json:"planned_reactivated"`
	PlannedCold        int     `json:"planned_cold"`
	Relet              int     `json:"expired_leases_replanned"`
	PenaltiesLive      int     `json:"peer_penalties_live"` // endpoints penalised in peers/ at now
	AvoidExpired       int     `json:"avoid_peers_expired"` // entries dropped from jobs' avoid_peers: penalty over
	AvoidListed        int     `json:"avoid_peers_listed"`  // endpoints in the jobs file's avoid list, for every job
	JobPeers           int     `json:"job_peers"`           // endpoints in jobs' peers (the state's announced peers)
	JobPeersAvoided    int     `json:"job_peers_avoided"`   // the state's peers left out of jobs: penalised
	LeasesPruned       int     `json:"stale_leases_dropped"`
	ColdSweepStart     int64   `json:"cold_sweep_start"` // first partition of this pass's cold window
	ColdSweepNext      int64   `json:"cold_sweep_next"`  // where the next pass's starts
	LeaseID            string  `json:"lease_id,omitempty"`
	PolicyHash         string  `json:"policy"`
	Snapshot           int64   `json:"snapshot"`
	CommitConflicts    int     `json:"commit_conflicts"`
	Seconds            float64 `json:"seconds"`

	// UnpublishedEnded counts the leases dropped of the jobs files that
	// killed runs to the same -o FILE left unpublished (see unpublished;
	// named as when they were ended, for --stats-json and the metrics).
	UnpublishedEnded int `json:"unpublished_leases_ended"`
	// ReplacedEnded counts the leases ended (Options.Replace) of the jobs
	// file at -o FILE that this run's jobs replace.
	ReplacedEnded int `json:"replaced_leases_ended"`
	// Dropped counts the jobs planned and then dropped, unleased, because
	// the output's reader had gone before the commit (ErrReaderGone):
	// Planned, and every count of what that commit would have done, are 0.
	Dropped int `json:"planned_dropped"`
	// ReaderGone is set when the output's reader went away (exit 141):
	// before the commit (Dropped jobs, nothing leased) or after it (the
	// Planned jobs stay leased, undelivered).
	ReaderGone bool `json:"reader_gone"`
	// LeaseUntil is when the planned jobs' lease ends (zero if none).
	LeaseUntil time.Time `json:"lease_until,omitzero"`
	// Committed is set once the run committed a snapshot (Snapshot), even
	// if a step after the commit point failed (dataset.AfterCommitError).
	Committed bool `json:"-"`
}

// Run plans one batch of jobs: it leases them in one commit and then
// delivers them to o.Output. A jobs file is written out whole (fsynced
// under a temporary name) before the commit, so that a full disk fails
// the run before any lease, and renamed into place after it: a crash
// leaves leased hashes that return to the queue when the lease ends (or
// at the next run to the same Output: unpublished), never jobs without
// leases. Stdout, or a FIFO or device written in place, gets the jobs
// only after the commit (what a reader took cannot be taken back if the
// commit fails), which leases nothing when its reader has gone
// (readerThere). A failure after the commit point
// (dataset.AfterCommitError) still delivers the jobs, then returns it,
// even when the commit is not durable: readers and the next writer see
// the leases, and should a crash bring back the snapshot before them,
// merge still stores the jobs' ok results (late) and ignores their
// failures (the hashes, unleased, are planned again): nothing is lost,
// nothing counted twice, where jobs withheld would leave their hashes
// leased to no one until the lease ends.
func Run(ctx context.Context, o Options) (_ Stats, err error) {
	start := time.Now()
	ctx = dataset.WithLockWait(ctx, o.LockWait) // --lock-wait bounds the run's waits in all
	var st Stats
	if err := o.check(); err != nil {
		return st, err
	}
	// A dry run without -o commits nothing: it works on a dataset it may
	// not write (a read-only copy or mount), reading it as status does.
	d, readOnly, err := openDataset(ctx, o, o.Limit == 0 && o.Output == "")
	if err != nil {
		return st, err
	}
	defer d.Close()
	defer func() { err = d.KeptMigration(err) }() // a migration Open committed stays: errors say so
	// Read here for its errors and the lease's end only (bad input before
	// a FIFO is opened): each try plans under the policy its transaction
	// began with.
	p0, err := schedule.Load(d.Dir)
	if err != nil {
		return st, exitcode.BadInput(err)
	}
	if _, lease, _, _ := passSettings(p0, o); o.Limit > 0 {
		if err := checkLeaseEnd(schema.Millis(o.Now), lease); err != nil {
			return st, err
		}
	}
	bl, err := schedule.LoadBlocklist(d.Dir)
	if err != nil {
		return st, exitcode.BadInput(err)
	}
	now := schema.Millis(o.Now)

	// A FIFO or device is opened once, after the dataset, its policy and
	// blocklist are read (bad input says so at once) and before planning:
	// a FIFO that no reader opens holds the run up before it takes the
	// writer lock or any lease, and a commit retried below does not close
	// it under its reader. Like stdout, it is written only after the
	// commit.
	var stream *rowio.Writer[schema.Job]
	if o.Output != "-" && fsutil.WrittenInPlace(o.Output) {
		if stream, err = rowio.CreateWith[schema.Job](o.OpenOutput, o.Output, o.Stdout); err != nil {
			return st, fmt.Errorf("plan-retries: %w", err)
		}
		defer stream.Abort() // closes it on error; nothing after Close
	}
	// The jobs files that killed runs to this -o FILE left unpublished,
	// claimed before a try opens the output (which would sweep them).
	u, prev := &unpublished{}, &replaced{}
	if stream == nil && o.Output != "" {
		u = claimUnpublished(o.Output) // prev: read by each try
	}
	defer u.close()
	// What the last try planned, and where its jobs go: w (nil: stdout,
	// opened after the commit); written: in w's temporary file, fsynced.
	var (
		p       schedule.Policy
		base    *dataset.Manifest
		jobs    *jobList
		leases  planned
		avoid   string
		w       *rowio.Writer[schema.Job]
		written bool
	)
	tries := dataset.Tries{Stage: "plan-retries", LockWait: o.LockWait, Conflicts: &st.CommitConflicts,
		Conflict: "dataset moved on while planning; planning again", ReadOnly: readOnly,
		// The try's leases and cursor, if they changed (commit); a jobs
		// file written for a commit that failed goes with it.
		Commit: func(ctx context.Context, tx *dataset.Tx) (*dataset.Manifest, error) {
			ready := func() error { return readerThere(o, stream, jobs.Len()) }
			changed := jobs.Len() > 0 || st.LeasesPruned > 0 || st.UnpublishedEnded > 0 || st.ReplacedEnded > 0
			began := time.Now()
			for kind, n := range map[string]int{"new": st.PlannedNew, "retry": st.PlannedRetry, "reactivated": st.PlannedReactivated, "cold": st.PlannedCold} {
				tx.AddTotal(dataset.TotalKey(dataset.TotalPlanJobs, kind), int64(n))
			}
			tx.AddTotal(dataset.TotalPlanNewOverdue, int64(st.PlannedNewOverdue))
			committing := phase(o, "plan-retries: committing")
			m, err := commit(ctx, tx, o, p, leases, changed, st.ColdSweepStart, st.ColdSweepNext, ready)
			committing.End()
			debugCommit(m, err, changed, jobs.Len(), time.Since(began))
			if _, committed := dataset.AsAfterCommit(err); err != nil && !committed && w != nil && w != stream {
				w.Abort()
			}
			return m, err
		}}
	m, after, err := tries.Run(ctx, d, func(tx *dataset.Tx, attempt int) (bool, error) {
		base, w, written = tx.Base(), nil, false
		if stream == nil && o.Output != "" {
			prev = readReplaced(o.Output, u)
		}
		var err error
		if p, err = schedule.Of(tx); err != nil {
			return false, exitcode.BadInput(err)
		}
		st.PolicyHash = p.Hash()
		share, lease, seed, coldBudget := passSettings(p, o)
		jobs, leases, avoid, err = planOnce(ctx, d, tx, p, bl, now, seed, o, share, lease, coldBudget, u, prev, &st)
		if err != nil {
			return false, tx.Moved(err)
		}
		st.DueUnplanned = st.Due - int64(st.Planned)
		if stream != nil {
			if err = setAvoid(o, stream, avoid, attempt > 0); err != nil {
				return false, fmt.Errorf("plan-retries: %w", err)
			}
			w = stream // written after the commit
		} else if o.Output != "-" && o.Output != "" {
			if w, err = openJobs(o, avoid); err != nil {
				return false, fmt.Errorf("plan-retries: %w", err)
			}
			if !w.InPlace() {
				if err := writeJobs(o, w, jobs, true); err != nil {
					return false, fmt.Errorf("plan-retries: %w (nothing leased)", err)
				}
				written = true
			}
		}
		return true, nil
	})
	if errors.Is(err, ErrReaderGone) {
		st.dropJobs(base.Snapshot)
		st.Seconds = time.Since(start).Seconds()
	}
	if err != nil {
		return st, err
	}
	st.Snapshot = m.Snapshot
	st.Committed = m.Snapshot > base.Snapshot
	if after == nil {
		u.remove(o.Output, st.UnpublishedEnded) // their leases are dropped, or were not there
		prev.note(st.ReplacedEnded)
	}
	if o.Committed != nil {
		o.Committed(st)
	}
	st.Seconds = time.Since(start).Seconds()
	if o.Output == "" { // a dry run: nothing to deliver
		if after != nil {
			return st, fmt.Errorf("plan-retries: %w", after)
		}
		return st, nil
	}
	began := time.Now()
	err = deliverJobs(o, w, written, jobs, avoid)
	debugDeliver(o, jobs.Len(), err, time.Since(began))
	if err != nil {
		st.ReaderGone = exitcode.Of(err) == exitcode.BrokenPipe
		switch {
		case after != nil: // exit 1 (not 141 nor 130): it says what was committed
			return st, exitcode.With(exitcode.Error, fmt.Errorf("plan-retries: %w; and %w", after, err))
		case st.Committed: // the leases hold whatever the output did: say so (err keeps its exit status)
			return st, fmt.Errorf("plan-retries: committed snapshot %d; then: %w", st.Snapshot, err)
		}
		return st, fmt.Errorf("plan-retries: %w", err)
	}
	if after != nil {
		return st, fmt.Errorf("plan-retries: %w", after)
	}
	return st, nil
}

// passSettings are the pass's new-hash share, lease, seed and cold-tier
// reserve: the policy's, unless the options override them.
func passSettings(p schedule.Policy, o Options) (share float64, lease time.Duration, seed uint64, coldBudget int) {
	share = p.Plan.NewShare
	if o.NewShare != nil {
		share = *o.NewShare
	}
	lease = time.Duration(p.Plan.Lease)
	if o.Lease > 0 {
		lease = o.Lease
	}
	seed = p.Seed
	if o.Seed != nil {
		seed = *o.Seed
	}
	return share, lease, seed, coldReserve(o.Limit, p.Plan.ColdShare)
}

// finishJobs writes out the jobs file w before the commit (a variable for
// tests, which make it fail as a full disk does).
var finishJobs = (*rowio.Writer[schema.Job]).Finish

// openJobs opens the output, with the avoid list of every job in its
// metadata. Its errors, as writeJobs' and deliverJobs', begin with the
// output's name (its path, or stdout), as rowio's do.
func openJobs(o Options, avoid string) (*rowio.Writer[schema.Job], error) {
	w, err := rowio.CreateWith[schema.Job](o.OpenOutput, o.Output, o.Stdout)
	if err != nil {
		return nil, err
	}
	if err := setAvoid(o, w, avoid, false); err != nil {
		w.Abort()
		return nil, err
	}
	return w, nil
}

// setAvoid sets the avoid list of every job in w's metadata; an empty
// list is left out unless replace (a FIFO or device kept across commit
// retries, whose list from an earlier try it replaces).
func setAvoid(o Options, w *rowio.Writer[schema.Job], avoid string, replace bool) error {
	if avoid == "" && !replace {
		return nil
	}
	if err := w.SetMetadata(schema.AvoidPeersKey, avoid); err != nil {
		return fmt.Errorf("%s: %w", map[bool]string{true: "stdout", false: o.Output}[o.Output == "-"], err)
	}
	return nil
}

// writeJobs writes jobs to w, and with finish writes the file out
// (finishJobs); on error it aborts w. The jobs are made as w takes them
// (never all held at once), and written as one Write of them all would.
func writeJobs(o Options, w *rowio.Writer[schema.Job], jobs *jobList, finish bool) error {
	writing := phase(o, "plan-retries: writing jobs")
	err := w.WriteSeq(jobs.all())
	if err == nil && finish {
		err = finishJobs(w)
	}
	writing.End()
	if err != nil {
		w.Abort()
	}
	return err
}

// deliverJobs delivers the jobs once their leases are committed: it
// publishes w if they are written in it already, else writes them (to
// w, or to stdout when w is nil) and closes the output. Its errors say
// that the jobs stay leased.
func deliverJobs(o Options, w *rowio.Writer[schema.Job], written bool, jobs *jobList, avoid string) error {
	const leased = "the jobs stay leased until their lease ends"
	var err error
	if w == nil {
		if w, err = openJobs(o, avoid); err != nil {
			return fmt.Errorf("%w (%s)", err, leased)
		}
	}
	if !written {
		if err := writeJobs(o, w, jobs, false); err != nil {
			return fmt.Errorf("%w (%s)", err, leased)
		}
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("%w (%s)", err, leased)
	}
	return nil
}

// planOnce scans the snapshot tx started from and returns the jobs, the
// lease table after them and the jobs file's avoid list, and fills st.
// The leases of u's unpublished jobs files are dropped first (their cold
// hashes offered as if in the cold window: lostCold), and those of
// the jobs file prev that the output replaces if o.Replace (if not, and
// any of them is live, the run is refused).
func planOnce(ctx context.Context, d *dataset.Dataset, tx *dataset.Tx, p schedule.Policy, bl schedule.Blocklist,
	now int64, seed uint64, o Options, share float64, lease time.Duration, coldBudget int, u *unpublished, prev *replaced,
	st *Stats) (*jobList, planned, string, error) {
	base := tx.Base()
	ph := planPhases{began: time.Now()}
	leases, err := leases.ReadSource(d, base)
	if err != nil {
		return nil, planned{}, "", fmt.Errorf("plan-retries: %w", err)
	}
	ended, lost := u.release(leases)
	replacedEnded, err := prev.check(leases, now, o.Replace)
	if err != nil {
		return nil, planned{}, "", err
	}
	live, err := livePenalties(d, base, now)
	if err != nil {
		return nil, planned{}, "", err
	}
	cursor := base.Cursor(dataset.CursorColdSweep)
	s := &scanner{d: d, m: base, p: p, bl: bl, leases: leases, now: now, seed: seed, limit: o.Limit, share: share,
		coldBudget: coldBudget, cursor: cursor, lost: lost}
	ph.read = time.Since(ph.began)
	ps, c, err := s.scan(ctx, o.Workers, o.ProgressTo)
	if err != nil {
		return nil, planned{}, "", err
	}
	ph.scan = time.Since(ph.began) - ph.read
	ph.pools = [3]int{ps.k[poolNew].Len(), ps.k[poolRetry].Len(), ps.k[poolCold].Len()}
	picking := phase(o, "plan-retries: picking jobs")
	*st = Stats{PolicyHash: st.PolicyHash, CommitConflicts: st.CommitConflicts,
		Scanned: c.Scanned, ColdScanned: c.ColdScanned, ColdInHot: c.ColdInHot, Fetched: c.Fetched, NotDue: c.NotDue, Leased: c.Leased,
		Blocked: c.Blocked, Due: c.Due, DueNew: c.DueNew, DueRetry: c.DueRetry, DueCold: c.DueCold,
		ColdSweepStart: cursor, ColdSweepNext: cursor, PenaltiesLive: len(live), UnpublishedEnded: ended,
		ReplacedEnded: replacedEnded}
	// The sweep moves on once this pass has had its look at the window,
	// in the commit that leases what it picked there. A dry run (--limit
	// 0) looks at it too (its due_cold is the window's), but leaves it
	// for the next pass: it counts what that pass would find, moving
	// nothing.
	if o.Limit > 0 && (s.hasCold() || c.ColdInHot > 0) {
		st.ColdSweepNext = schedule.NextColdCursor(p, cursor)
	}
	// Each pool holds at least what quota gives it (caps): its best.
	nNew, nRetry, nCold := quota(o.Limit, coldBudget, share, ps.due[poolNew], ps.due[poolRetry], ps.due[poolCold])
	picked := ps.pick([3]int{nNew, nRetry, nCold})

	// A dry run drops no stale lease: it commits nothing (a commit would
	// also collect the snapshots past --keep that readers may be on).
	if o.Limit > 0 {
		st.LeasesPruned = leases.Prune(now)
	}
	jobs := newJobList(picked, leaseID(seed, now, base.Snapshot, base.DatasetID), now+lease.Milliseconds(), live)
	jobs.count(st)
	if jobs.Len() > 0 {
		st.LeaseID, st.LeaseUntil = jobs.id, time.UnixMilli(jobs.until).UTC()
	}
	avoid, listed := avoidList(live)
	st.AvoidListed = listed
	table := newPlanned(leases, jobs, now) // the jobs' leases, planned at now
	picking.End()
	ph.log(base, st, table.len())
	return jobs, table, avoid, nil
}

// commit records the leases (if they changed), the cold sweep's cursor
// (if it moved from from to next) and the policy; it commits nothing when
// neither changed. ready is the commit's last question (CommitOptions).
func commit(ctx context.Context, tx *dataset.Tx, o Options, p schedule.Policy, ls planned, leased bool, from, next int64, ready func() error) (*dataset.Manifest, error) {
	swept := next != from
	if !leased && !swept {
		tx.Abort()
		return tx.Base(), nil
	}
	if leased {
		if err := ls.write(tx); err != nil {
			tx.Abort() // and the writer lock, if it holds it
			return nil, err
		}
	}
	if swept {
		tx.SetCursor(dataset.CursorColdSweep, next)
	}
	tx.SetPolicy(p.JSON())
	return commitTx(ctx, tx, dataset.CommitOptions{LockWait: o.LockWait, Keep: o.Keep, Writer: "plan-retries", Ready: ready})
}

// commitTx is tx.Commit (a variable for tests, which make a commit end
// as one whose fsync after the commit point failed).
var commitTx = func(ctx context.Context, tx *dataset.Tx, o dataset.CommitOptions) (*dataset.Manifest, error) {
	return tx.Commit(ctx, o)
}

// leaseID names the leases of one pass: reproducible from the seed, the
// planning time and the snapshot planned from, distinct between passes,
// and naming the dataset (leases.ID), whose merge alone takes their
// results.
func leaseID(seed uint64, now, snapshot int64, datasetID string) string {
	var b [24]byte
	binary.LittleEndian.PutUint64(b[0:], seed)
	binary.LittleEndian.PutUint64(b[8:], uint64(now))
	binary.LittleEndian.PutUint64(b[16:], uint64(snapshot))
	sum := sha256.Sum256(b[:])
	return leases.ID(hex.EncodeToString(sum[:8]), datasetID)
}
