package dedup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/internal/progress"
)

// Options configure a dedup run.
type Options struct {
	Data     string        // dataset directory (created if missing)
	Inputs   []string      // files, folders, or "-" for stdin; none: only DIR/inbox/ leftovers
	Stdin    io.Reader     // read for "-"
	Now      time.Time     // the clock: next_retry of new hashes
	HalfLife time.Duration // activity half-life
	Keep     int           // snapshots kept for readers
	LockWait time.Duration // wait for the writer lock instead of failing
	BloomFP  float64       // Bloom filter false-positive rate per partition
	// AnnouncedPeers reads announce_peer rows' endpoints (node_addr's IP,
	// peer_port) into the state's peers (peers.go). Off, those columns
	// are not decoded at all and the state's peers are carried as they are:
	// the work then is what issue 2's benchmark compares with DuckDB's
	// GROUP BY.
	AnnouncedPeers bool
	MaxFiles       int // files per partition before dedup compacts it
	Workers        int // partitions applied in parallel
	// BatchHashes bounds a commit's batch: once the inputs read hold this
	// many distinct hashes, they are applied and committed, and the inputs
	// after them go to further commits (an input is never split). 0: no
	// bound. DefaultOptions' is DefaultBatchHashes(false): a run with
	// AnnouncedPeers needs DefaultBatchHashes(true).
	BatchHashes int64
	// Reactivate is the scheduler's rule for a fresh observation of a known
	// hash (schedule.Reactivate bound to the dataset's policy), given the
	// newest fresh announce_peer observation too (0: none); it reports
	// whether the hash was reactivated.
	Reactivate func(st *schema.State, observedAt, announcedAt int64) bool
	Policy     []byte // the policy in force, recorded in the manifest
	// BindPolicy, when set, sets Reactivate, Policy and HalfLife from the
	// policy that tx works under (schedule.Of): Run calls it at every try,
	// as the transaction begins, so that a try re-applied after a "policy
	// set" (a conflict at commit) runs under the new policy.
	BindPolicy func(o *Options, tx *dataset.Tx) error
	// ProgressTo receives a progress bar (terminal) or periodic log lines.
	ProgressTo io.Writer
}

// DefaultOptions returns the defaults.
func DefaultOptions() Options {
	return Options{Now: time.Now().UTC(), HalfLife: 24 * time.Hour, Keep: 3, BloomFP: 0.01, MaxFiles: 8,
		Workers: runtime.GOMAXPROCS(0), Stdin: os.Stdin, BatchHashes: DefaultBatchHashes(false)}
}

type runner struct {
	prog *progress.Reporter
	o    Options
	d    *dataset.Dataset
	b    *batch
	now  int64
	// trackAnn is what aggregate sets batch.trackAnn to: the base state
	// has rows (a hash may be known, and so reactivated).
	trackAnn bool
}

// Run folds the inputs into the dataset, in one commit unless they hold
// more than o.BatchHashes distinct hashes (then in one commit per group of
// whole inputs). Re-running it on inputs already applied changes nothing.
// An error after some commits is partial (exit 3): what they applied stays.
func Run(ctx context.Context, o Options) (Stats, error) {
	st, err := runAll(ctx, o)
	return st, partialAfterCommits(err, st)
}

// errNoInput ends a run given no INPUT when DIR/inbox/ holds nothing
// left to apply either.
var errNoInput = exitcode.BadInput(errors.New("dedup: no input: name files, folders, or - for stdin (DIR/inbox/ holds nothing left to apply)"))

func runAll(ctx context.Context, o Options) (st Stats, err error) {
	start := time.Now()
	ctx = dataset.WithLockWait(ctx, o.LockWait) // --lock-wait bounds the run's waits in all
	if o.MaxFiles < 1 {
		o.MaxFiles = 1
	}
	if o.Workers < 1 {
		o.Workers = 1
	}
	slog.Debug("dedup: batch bound", "batch_hashes", o.BatchHashes, "announced_peers", o.AnnouncedPeers)
	// NaN passed a check written as "<= 0 || >= 1" and panicked sizing
	// the first Bloom filter.
	if !(o.BloomFP > 0 && o.BloomFP < 1) {
		return st, exitcode.BadInput(fmt.Errorf("dedup: --bloom-fp: %v is not between 0 and 1 (both excluded)", o.BloomFP))
	}
	// Without arguments, dedup applies what earlier runs left in
	// DIR/inbox/ (stdin kept by a run locked out, or killed), as merge
	// does: that needs a dataset, and makes none.
	// INPUTs that are all folders holding no input file are nothing to
	// do (exit 0), but for leftovers, applied then as a bare run does,
	// and but for a DIR that a run with input would refuse (bad input
	// then too: a typo is told at once, not on the first capture).
	empty := onlyEmptyFolders(o.Inputs)
	if empty && !leftoversIn(o.Data) {
		return st, dataset.Makeable(o.Data)
	}
	if empty {
		o.Inputs = nil
	}
	bare := len(o.Inputs) == 0
	d, err := dataset.Open(ctx, o.Data, dataset.OpenOptions{Create: !bare, LockWait: o.LockWait, Keep: o.Keep, Now: o.Now})
	if bare && (errors.Is(err, dataset.ErrNotDataset) || errors.Is(err, dataset.ErrNoFolder)) {
		if empty {
			return st, nil
		}
		return st, errNoInput
	}
	if err != nil {
		return st, dataset.NothingRead(err) // stdin is read after (resolveInputs)
	}
	defer d.Close() // then app's newData may remove a dataset it created
	// A migration Open committed stays: the error says so (app's texts).
	defer func() { err = d.KeptMigration(err) }()
	// A new dataset is announced once the run keeps it: one that ends
	// with nothing committed is removed again (see app's newData).
	announced := !d.Created
	cache := loadInputCache(d)
	ins, busy, err := resolveInputs(ctx, o.Inputs, o.Stdin, d, cache)
	if err != nil {
		return st, err
	}
	st.InputsBusy = len(busy)
	if len(ins) == 0 && len(busy) > 0 {
		return current(st, d), leftOut(nil, busy)
	}
	if len(ins) == 0 && empty {
		return st, nil
	}
	if len(ins) == 0 {
		return st, noInput(d, o.Data)
	}
	// A stream spooled whole waits in the inbox when the run fails (a
	// commit on a full disk): the error says so. Deferred before
	// settleLive, it runs after it, when stdin's spool is whole.
	defer func() { err = keptNote(err, ins) }()
	defer settleLive(ctx, ins)
	if len(ins) > 1 {
		// Not the inputs the input cache knows applied: they are not read.
		checked, err := precheck(ctx, notApplied(d, nil, ins), o.AnnouncedPeers)
		if err != nil {
			return st, err
		}
		ins = withChecked(ins, checked)
	}
	sums := checksumAll(ins)
	defer func(sums *checksums) { // Run sets sums to nil once it has the ids
		if err == nil { // a failed run changes no file of the dataset
			cache.save(ctx, sums)
		}
		sums.halt() // (done already, unless the run failed first)
	}(sums)
	// The aggregation tables hold no pointers, so the collector's mark
	// work stays small however large they grow; collecting at +25% instead
	// of +100% keeps peak memory near what the tables need.
	defer debug.SetGCPercent(debug.SetGCPercent(25))
	r := &runner{o: o, d: d, now: schema.Millis(o.Now)}
	defer func() { r.b.release() }() // the aggregates live outside the Go heap
	rows := map[string]int64{}
	aggregated := ""    // idsOf the inputs in r.b
	var parts partStats // over the run's commits
	st.Inputs = len(ins)
	committed := 0     // inputs this run's commits applied
	var cuts []cutNote // of the inputs committed: see leftOut
	tries := dataset.Tries{Stage: "dedup", LockWait: o.LockWait, Conflicts: &st.CommitConflicts,
		Collected: "the snapshot being read was collected by later commits; re-applying on the new one",
		Conflict:  "dataset moved on while working; re-applying on the new snapshot",
		Commit: func(ctx context.Context, tx *dataset.Tx) (*dataset.Manifest, error) {
			phase := time.Now()
			m, err := tx.Commit(ctx, dataset.CommitOptions{LockWait: o.LockWait, Keep: o.Keep, Writer: "dedup"})
			slog.Debug("dedup: committed", "seconds", time.Since(phase).Seconds())
			return m, err
		}}
	for { // a commit per batch
		var (
			base           *dataset.Manifest
			pending, group []input
			ps             partStats
		)
		m, after, err := tries.Run(ctx, d, func(tx *dataset.Tx, _ int) (_ bool, err error) {
			base = tx.Base()
			if err := r.bindPolicy(tx); err != nil {
				return false, err
			}
			if r.b != nil && r.b.halfLife != float64(r.o.HalfLife.Milliseconds()) {
				aggregated = "" // aggregated under another half-life: read again
			}
			r.trackAnn = r.o.Reactivate != nil && base.Table(dataset.TableState).Rows() > 0
			if r.b != nil && r.trackAnn && !r.b.trackAnn {
				aggregated = "" // aggregated for an empty state, without the announces: read again
			}
			if sums != nil {
				if aggregated, err = r.readWhileChecksumming(ctx, tx.Base(), ins, sums, rows); err != nil {
					return false, err
				}
				ids, _ := sums.wait() // no error: readWhileChecksumming returned it
				ins, sums = withIDs(ins, ids), nil
			}
			if pending, err = pendingInputs(d, tx.Base(), ins); err != nil {
				return false, err
			}
			// Already applied: what the ledger holds but this run did not
			// commit, found at the start or applied by another writer
			// while this try worked.
			st.InputsSkipped = len(ins) - len(pending) - committed
			if len(pending) == 0 {
				return false, nil
			}
			// The batch is the first inputs pending, as many as aggregate took.
			group = aggregatedPrefix(pending, aggregated)
			if group == nil {
				n, err := r.aggregate(ctx, pending, "dedup: inputs aggregated")
				if err != nil {
					return false, err
				}
				group = pending[:len(n)]
				for i, in := range group {
					rows[in.id] = n[i]
				}
				aggregated = idsOf(group)
			}
			phase := time.Now()
			setApplyGC()
			r.prog = r.newProgress("dedup: applying partitions", 256)
			ps, err = r.applyAll(ctx, tx)
			r.prog.Done()
			if err != nil {
				return false, tx.Moved(err)
			}
			for _, in := range group {
				tx.AddApplied(dataset.Applied{ID: in.id, Name: ledgerName(in), Rows: rows[in.id], At: o.Now})
			}
			addTotals(tx, len(group), r.b.obs, ps)
			if r.o.Policy != nil {
				tx.SetPolicy(r.o.Policy)
			}
			slog.Debug("dedup: partitions applied", "seconds", time.Since(phase).Seconds())
			return true, nil
		})
		if err != nil {
			return st, err
		}
		if m == nil { // nothing pending: every input is in the ledger
			removeInbox(ins)
			if !announced && base.Snapshot == 0 { // else another writer filled it
				slog.Info("dedup: created a new, empty dataset", "dir", d.Dir)
			}
			st.StateRows = base.Table(dataset.TableState).Rows()
			st.Snapshot = base.Snapshot
			st.Seconds = time.Since(start).Seconds()
			return st, leftOut(cuts, busy)
		}
		st.Commits++
		committed += len(group)
		cuts = append(cuts, r.b.cutsOf(group)...)
		if !announced {
			slog.Info("dedup: created a new dataset", "dir", d.Dir, "snapshot", m.Snapshot)
			announced = true
		}
		st.Observations += r.b.obs
		st.FutureClamped += r.b.fut.n
		r.b.warnFuture()
		st.BadPeerPorts += r.b.ports.n
		r.b.ports.warn()
		r.b.ports.warnNoPort()
		st.Distinct += r.b.distinct()
		st.InBatchDups = st.Observations - st.Distinct
		parts.add(ps)
		st.BloomNegatives, st.BloomPositives = parts.bloomNeg, parts.bloomPos
		st.ConfirmedKnown, st.FalsePositives = parts.known, parts.falsePos
		st.New, st.Reactivated, st.Rewarmed = parts.fresh, parts.reactivated, parts.rewarmed
		st.StateRows = m.Table(dataset.TableState).Rows()
		st.Snapshot = m.Snapshot
		if after != nil {
			applied := group // what a durable commit lets go of, as below
			if len(group) == len(pending) {
				applied = ins
			}
			st.Seconds = time.Since(start).Seconds()
			return st, afterCommit(after, applied, len(ins)-len(pending)+len(group), len(ins))
		}
		if len(group) < len(pending) {
			// More inputs than one batch holds: on to the next batch.
			removeInbox(group)
			slog.Info("dedup: committed a batch; reading the next inputs", "snapshot", m.Snapshot,
				"inputs_done", len(ins)-len(pending)+len(group), "inputs", len(ins))
			r.b.release()
			r.b, aggregated = nil, ""
			debug.SetGCPercent(25) // as for the first batch's aggregation
			continue
		}
		removeInbox(ins) // every input is now in the ledger, duplicates included
		st.Seconds = time.Since(start).Seconds()
		return st, leftOut(cuts, busy)
	}
}

// bindPolicy binds the options to the policy tx works under
// (Options.BindPolicy), if the run has a binder.
func (r *runner) bindPolicy(tx *dataset.Tx) error {
	if r.o.BindPolicy == nil {
		return nil
	}
	return r.o.BindPolicy(&r.o, tx)
}

// afterCommit is the error of a run whose commit failed after the commit
// point (after): it stops there, having applied done of its total
// inputs. The spooled inputs among applied (now in the ledger) are
// removed only if the commit is durable; else a later run removes them
// once it finds them in the ledger, or applies them again if a crash of
// the machine lost the commit.
func afterCommit(after *dataset.AfterCommitError, applied []input, done, total int) error {
	if after.Durable {
		removeInbox(applied)
	}
	if done < total {
		return fmt.Errorf("dedup: %w; %d of %d inputs are applied: re-run for the rest", after, done, total)
	}
	return fmt.Errorf("dedup: %w", after)
}

// aggregatedPrefix returns the first inputs of pending if they are the
// ones aggregated holds (as idsOf lists them), else nil.
func aggregatedPrefix(pending []input, aggregated string) []input {
	if aggregated == "" {
		return nil
	}
	ids := ""
	for k, in := range pending {
		ids += in.id + ","
		if len(ids) >= len(aggregated) {
			if ids == aggregated {
				return pending[:k+1]
			}
			return nil
		}
	}
	return nil
}

// aggregate reads ins into a fresh batch and returns how many
// observations each held. It stops after the input that brings the batch
// to o.BatchHashes distinct hashes: the batch is the first len(rows)
// inputs. done is its --debug line once read (which says whether the
// inputs' checksums were computed alongside, in the same seconds).
func (r *runner) aggregate(ctx context.Context, ins []input, done string) ([]int64, error) {
	phase := time.Now()
	r.b.release()
	r.b = newBatch(r.o.HalfLife.Milliseconds())
	r.b.noPeers = !r.o.AnnouncedPeers
	r.b.trackAnn = r.trackAnn
	r.b.fut.setClock(r.now)
	r.b.prog = r.newProgress("dedup: reading observations", -1)
	defer r.b.prog.Done()
	rows := make([]int64, 0, len(ins))
	for _, in := range ins {
		n, err := readInput(ctx, in, r.now, r.b)
		if err != nil {
			return nil, err
		}
		rows = append(rows, n)
		r.b.endInput(in.name)
		r.b.ports.endInput(in.name)
		slog.Debug("dedup: read input", "input", in.name, "kind", in.kind, "observations", n)
		if d := r.b.distinct(); r.o.BatchHashes > 0 && d >= r.o.BatchHashes && len(rows) < len(ins) {
			slog.Info("dedup: batch full; the inputs after this one go to the next commit",
				"input", in.name, "distinct", d, "batch_hashes", r.o.BatchHashes)
			break
		}
	}
	slog.Debug(done, "seconds", time.Since(phase).Seconds())
	return rows, nil
}

func (r *runner) newProgress(label string, total int64) *progress.Reporter {
	if r.o.ProgressTo == nil {
		return nil
	}
	return progress.New(r.o.ProgressTo, label, total)
}

// pendingInputs drops inputs already in the ledger of snapshot m, and
// repeats by content within this run.
func pendingInputs(d *dataset.Dataset, m *dataset.Manifest, ins []input) ([]input, error) {
	return dataset.Pending(d, m, ins, func(in input) string { return in.id })
}

func idsOf(ins []input) string {
	s := ""
	for _, in := range ins {
		s += in.id + ","
	}
	return s
}

func removeInbox(ins []input) {
	for _, in := range ins {
		if in.inbox {
			os.Remove(in.path)
		}
	}
}

// applyAll applies every partition with the batch's hashes, in parallel.
func (r *runner) applyAll(ctx context.Context, tx *dataset.Tx) (partStats, error) {
	base := tx.Base().Table(dataset.TableState)
	// Workers go on while the disk takes their files' last buffers (two
	// a worker: four was no faster and held ~10 MB more).
	tx.FinishInBackground(2 * r.o.Workers)
	var (
		mu    sync.Mutex
		total partStats
		first error
		wg    sync.WaitGroup
		next  = make(chan int)
	)
	for w := 0; w < r.o.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var bufs workerBufs
			for p := range next {
				ps, err := r.applyPartition(tx, base, byte(p), &bufs)
				mu.Lock()
				if err != nil && first == nil {
					first = err
				}
				total.add(ps)
				r.prog.Add(1)
				mu.Unlock()
			}
		}()
	}
	for p := 0; p < 256; p++ {
		mu.Lock()
		stop := first != nil
		mu.Unlock()
		if stop || ctx.Err() != nil {
			break
		}
		next <- p
	}
	close(next)
	wg.Wait()
	if err := tx.WaitStaged(); first == nil { // a write that failed after its worker went on
		first = err
	}
	if first != nil {
		return total, first
	}
	return total, ctx.Err()
}

// setApplyGC sets the collector for the apply phase, which reads, folds
// and writes partition after partition in reused buffers. The aggregates
// are off the Go heap, so the heap is only those buffers: the default
// pace of a collection per doubling was no faster than +50% (measured on
// a 10M-row batch and an incremental one), and costs more memory.
//
// It collects first and returns the pages to the kernel: the read
// pipeline's buffers are garbage now. (A pace set from the live heap
// measured after this collection let the nearly empty heap grow fivefold:
// an incremental batch's peak memory went from 128 to 220 MB.)
func setApplyGC() {
	debug.FreeOSMemory()
	debug.SetGCPercent(50)
}

// addTotals adds a commit's work to the dataset's totals (published with
// it, or not at all).
func addTotals(tx *dataset.Tx, inputs int, obs int64, ps partStats) {
	tx.AddTotal(dataset.TotalDedupInputs, int64(inputs))
	tx.AddTotal(dataset.TotalDedupObservations, obs)
	tx.AddTotal(dataset.TotalDedupNew, ps.fresh)
	tx.AddTotal(dataset.TotalDedupReactivated, ps.reactivated)
	tx.AddTotal(dataset.TotalDedupRewarmed, ps.rewarmed)
}
