package merge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/formats/leases"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/pipeline/schedule"
)

// Options configure a merge run.
type Options struct {
	Data     string        // dataset directory
	Inputs   []string      // results files or folders, "-" for stdin
	From     string        // another dataset to union in (instead of Inputs)
	Stdin    io.Reader     // read for "-"
	Now      time.Time     // the clock: archival, pruning, the ledger
	Keep     int           // snapshots kept for readers
	LockWait time.Duration // wait for the writer lock instead of failing
	Workers  int           // partitions rewritten in parallel
	// MaxMetadataSize caps an info dictionary (1 to MaxMetadataSizeLimit):
	// a results file holding a larger one is bad input (metacap.go).
	MaxMetadataSize int64
	// ProgressTo receives a progress bar (terminal) or periodic log
	// lines of the results read and partitions rewritten (nil: none).
	ProgressTo io.Writer

	fullPath bool // tests: rewrite every partition whole, never splice (runner.fullPath)
}

// DefaultOptions returns the defaults.
func DefaultOptions() Options {
	return Options{Stdin: os.Stdin, Now: time.Now().UTC(), Keep: 3, Workers: runtime.GOMAXPROCS(0),
		MaxMetadataSize: DefaultMaxMetadataSize}
}

// testBeforeCommit, when set (by tests), runs after a try has staged its
// changes, before their commit.
var testBeforeCommit func()

// pendingInputs drops inputs already in the ledger of snapshot m, and
// repeats by content within this run.
func pendingInputs(d *dataset.Dataset, m *dataset.Manifest, ins []input) ([]input, error) {
	return dataset.Pending(d, m, ins, func(in input) string { return in.id })
}

// runner applies one batch to one transaction.
type runner struct {
	d          *dataset.Dataset
	tx         *dataset.Tx
	base       *dataset.Manifest
	p          schedule.Policy
	now        int64
	leases     leases.Sorted
	peers      *peerTable
	spill      *metaSpill // the metadata of the results applied (nil: in the rows)
	progressTo io.Writer  // Options.ProgressTo
	fullPath   bool       // never splice a partition (Options.fullPath, for tests)
	mu         sync.Mutex // guards tx
}

// Run folds the results in o.Inputs (or the dataset o.From) into o.Data
// in one commit. A folder among o.Inputs gives its results files
// (inputdir.Exts); when none gives any and DIR/inbox/merge/ holds no
// leftover, there is nothing to do: no commit, no error.
func Run(ctx context.Context, o Options) (st Stats, err error) {
	start := time.Now()
	ctx = dataset.WithLockWait(ctx, o.LockWait) // --lock-wait bounds the run's waits in all
	if err := checkMaxMetadataSize(o.MaxMetadataSize); err != nil {
		return st, err
	}
	if o.From != "" {
		if len(o.Inputs) > 0 {
			return st, exitcode.BadInput(errors.New("merge: --from takes no RESULTS arguments"))
		}
		return runFrom(ctx, o, start)
	}
	d, err := dataset.Open(ctx, o.Data, dataset.OpenOptions{LockWait: o.LockWait, Keep: o.Keep, Now: o.Now})
	if err != nil {
		return st, dataset.NothingRead(err) // stdin is read after (resolveInputs)
	}
	defer d.Close()
	// A migration Open committed stays: the error says so (app's texts).
	defer func() { err = d.KeptMigration(err) }()
	// Read here for its errors only (bad input before stdin is spooled):
	// each try merges under the policy its transaction began with.
	if _, err := schedule.Load(d.Dir); err != nil {
		return st, exitcode.BadInput(err)
	}
	ins, err := resolveInputs(ctx, d, o.Inputs, o.Stdin)
	if err != nil {
		return st, err
	}
	for i := range ins {
		ins[i].maxMeta = o.MaxMetadataSize
	}
	ins, busy := skipWriting(ins)
	st.InputsBusy = len(busy)
	// The spools among ins stay locked until the run has committed them
	// (and removed them) or given them up: no other run applies them.
	defer releaseAll(ins)
	// Stdin spooled waits in the inbox when the run fails (a commit on a
	// full disk, or locked out): the error says so.
	defer func() { err = keptNote(err, ins) }()
	if len(ins) == 0 && len(busy) > 0 {
		if m, err := d.Current(); err == nil { // its summary says the snapshot, not 0
			st.Snapshot = m.Snapshot
		}
		return st, cutInputs(nil, nil, busy)
	}
	if len(ins) == 0 && len(o.Inputs) > 0 { // every RESULTS a folder holding no input file: nothing to do
		return st, nil
	}
	if len(ins) == 0 { // without arguments, merge applies what a killed run spooled
		// Another run spooling its stdin there applies it itself, as
		// dedup's bare run says: the line said only "no input".
		if live := dataset.LiveSpools(d.Path(inboxDir), filepath.Join(o.Data, inboxDir), ".results"); live != "" {
			return st, exitcode.BadInput(fmt.Errorf("merge: no input: name results files, folders, or - for stdin (DIR/inbox/merge/ holds nothing left to apply%s)", live))
		}
		return st, exitcode.BadInput(errors.New("merge: no input (name results files, folders, or - for stdin)"))
	}
	st.Inputs = len(ins)
	var pending []input
	var notes map[string]inputNote
	var base *dataset.Manifest
	var staged time.Time // when the last try had staged its changes: the commit follows
	m, after, err := o.tries("merge", &st).Run(ctx, d, func(tx *dataset.Tx, _ int) (bool, error) {
		// A try counts only what it applies: an earlier try's counters
		// went with its transaction (its inputs may be applied by the
		// writer that overtook it, and then this run applies nothing).
		st = Stats{Inputs: st.Inputs, InputsBusy: st.InputsBusy, CommitConflicts: st.CommitConflicts}
		base = tx.Base()
		p, err := policyOf(tx, &st)
		if err != nil {
			return false, err
		}
		if pending, err = pendingInputs(d, tx.Base(), ins); err != nil {
			return false, err
		}
		st.InputsSkipped = len(ins) - len(pending)
		debugSkipped(ins, pending)
		r := &runner{d: d, tx: tx, base: tx.Base(), p: p, now: schema.Millis(o.Now), progressTo: o.ProgressTo, fullPath: o.fullPath}
		bst, idle := Stats{}, len(pending) == 0 // all applied before, or (below) no result row: housekeeping only, if any
		if !idle {
			bst, notes, err = r.applyInputs(ctx, pending, o.Workers)
			idle = errors.Is(err, errNoResults)
		}
		var pruned bool
		if idle {
			bst, pruned, err = r.housekeep()
		}
		if err != nil {
			return false, tx.Moved(err)
		}
		if idle && !pruned {
			return false, nil
		}
		bst.Inputs, bst.InputsSkipped, bst.PolicyHash, bst.CommitConflicts = st.Inputs, st.InputsSkipped, st.PolicyHash, st.CommitConflicts
		bst.InputsBusy = st.InputsBusy
		st = bst
		for _, in := range pending {
			if !idle { // an idle run's inputs are recorded nowhere
				tx.AddApplied(dataset.Applied{ID: in.id, Name: ledgerName(in), Rows: notes[in.id].rows, At: o.Now})
			}
			st.FutureClamped += notes[in.id].future.n
		}
		if !idle { // nor counted: housekeeping applies no input
			addTotals(tx, len(pending), &st)
		}
		tx.SetPolicy(p.JSON())
		staged = time.Now()
		if testBeforeCommit != nil {
			testBeforeCommit()
		}
		return true, nil
	})
	debugCommitted(m, err, st.CommitConflicts, staged)
	if err != nil {
		return st, err
	}
	if m == nil { // every input was applied before, or holds no result, and nothing was pruned
		removeInbox(ins)
		st.Snapshot = base.Snapshot
		st.Seconds = time.Since(start).Seconds()
		return st, cutInputs(pending, notes, busy)
	}
	for _, in := range pending {
		warnFuture(in.name, notes[in.id].future, o.Now)
		warnForeign(in.name, notes[in.id].rows, notes[in.id].leases)
	}
	// A spooled input goes once the commit that records it is
	// durable (a later run removes it when it finds it applied).
	if after == nil || after.Durable {
		removeInbox(ins)
	}
	st.Snapshot, st.Committed = m.Snapshot, true
	st.Seconds = time.Since(start).Seconds()
	if after != nil {
		return st, fmt.Errorf("merge: %w", after)
	}
	return st, cutInputs(pending, notes, busy)
}

// skipWriting leaves out of ins the files named as RESULTS that a stream
// is still being written into ("fetch -o - > FILE" at work: its writer
// holds the file's lock, fsutil.Writing), and names each in busy: one
// applied now and again once whole would be two inputs, each counting
// its results' peer failures.
func skipWriting(ins []input) (kept []input, busy []string) {
	kept = ins[:0:0]
	for _, in := range ins {
		if in.inbox || in.spooled != "" {
			kept = append(kept, in)
			continue
		}
		if who, ok := fsutil.Writing(in.path); ok {
			busy = append(busy, fmt.Sprintf("%s: still being written by %s: skipped, not applied (apply it once its writer is done)", in.name, who))
			continue
		}
		kept = append(kept, in)
	}
	return kept, busy
}

// tries is the loop of tries of a merge run (stage "merge" or "merge
// --from"), which counts its conflicts in st.
func (o Options) tries(stage string, st *Stats) dataset.Tries {
	return dataset.Tries{Stage: stage, LockWait: o.LockWait, Keep: o.Keep, Conflicts: &st.CommitConflicts,
		Conflict: "dataset moved on while merging; merging again"}
}

// policyOf is the policy a try's transaction works under (schedule.Of:
// bad input if it is not valid); st notes its hash.
func policyOf(tx *dataset.Tx, st *Stats) (schedule.Policy, error) {
	p, err := schedule.Of(tx)
	if err != nil {
		return p, exitcode.BadInput(err)
	}
	st.PolicyHash = p.Hash()
	return p, nil
}

// inputNote is what applyInputs read of one input: its rows, those it
// read as dated at the run's clock, and, for a stream cut mid-message,
// where it ends (its rows are those of its whole batches).
type inputNote struct {
	rows   int64
	future futureNote
	cut    *rowio.CutError
	leases leaseNote // its results by lease_id (foreign.go)
}

// errNoResults is applyInputs' answer for inputs that hold no result row
// (the output of a fetch given no job, an idle pass's): they change
// nothing, so the run records them in no ledger (applied again, they
// still change nothing) and commits no snapshot (one would shorten the
// window of --keep snapshots readers rely on) unless housekeeping has
// something to prune (runner.housekeep).
var errNoResults = errors.New("no results")

// applyInputs reads the pending inputs and stages what they change in r's
// transaction; it returns a note per input (by id). The inputs are read at
// every attempt (a commit conflict is rare), and what is read is not kept
// in memory whole: the rows keep their metadata in a spill file
// (metaSpill) in the dataset's staging folder, removed on return, once the
// torrents are staged, and the rows themselves, packed, go there a chunk
// of a partition at a time (prefixed). Kept to the commit, it made the
// commit's syncfs write it out as well (a merge of 240 MiB of metadata
// wrote 480 MiB to the disk).
func (r *runner) applyInputs(ctx context.Context, pending []input, workers int) (Stats, map[string]inputNote, error) {
	r.spill = newMetaSpill(r.d)
	defer r.spill.close()
	notes := map[string]inputNote{}
	results := &prefixed{spill: r.spill}
	prog := r.readingProgress(pending)
	defer prog.Done()
	for _, in := range pending {
		in.dataset, in.ancestors, in.passes = r.base.DatasetID, r.base.AncestorIDs, r.base.AncestorPasses
		began := time.Now()
		var future futureNote
		var leased leaseNote
		n, cut, err := readResultsTo(in, r.spill, prog, func(res *result) {
			future.clamp(res, r.now)
			leased.add(res.LeaseID)
			results.add(res)
		})
		if err == nil {
			err = results.err
		}
		if err != nil {
			if in.inbox && exitcode.Of(err) == exitcode.Usage {
				err = setAside(in, err) // never block later runs
			}
			return Stats{}, nil, err
		}
		notes[in.id] = inputNote{rows: n, future: future, cut: cut, leases: leased}
		debugInput(in, notes[in.id], time.Since(began))
		checkpoint()
	}
	prog.Done() // the final count, before apply's steps
	if results.n == 0 {
		return Stats{}, notes, errNoResults
	}
	began := time.Now()
	st, err := r.apply(ctx, results, workers)
	debugApplied(st, err, time.Since(began))
	if err == nil {
		judgeLeases(notes, r.leases) // the base snapshot's lease table
	}
	return st, notes, err
}

// testCheckpoint, when a test sets it, is called where merge holds the
// most: once each input is read (its rows held for apply), and once each
// torrent row is written (its metadata read back from the spill, the
// writer's buffers filling). It runs on the goroutine doing that work,
// so with one worker a garbage collection forced there measures what
// merge holds, whatever the collector's pacing under load made of the
// live heap meanwhile (TestMergeHeapBelowMetadata). Nil outside tests.
var testCheckpoint func()

// checkpoint calls testCheckpoint if a test set it.
func checkpoint() {
	if testCheckpoint != nil {
		testCheckpoint()
	}
}

// apply stages everything results change.
func (r *runner) apply(ctx context.Context, results *prefixed, workers int) (Stats, error) {
	var st Stats
	st.Results = results.n
	var err error
	ph := r.phase("merge: reading the peers table")
	r.peers, err = readPeers(r.d, r.base)
	if ph.End(); err != nil {
		return st, err
	}
	ph = r.phase("merge: penalizing peers")
	st.PeerPenalties = r.peers.penalize(r.p, results.failures)
	results.failures = nil
	st.PeersForgotten = r.peers.prune(r.p, r.now)
	ph.End()
	ph = r.phase("merge: reading the leases table")
	r.leases, err = leases.ReadSorted(r.d, r.base)
	if ph.End(); err != nil {
		return st, fmt.Errorf("merge: %w", err)
	}
	parts := results.parts()
	prog := r.newProgress("merge: applying partitions", int64(len(parts)))
	defer prog.Done()
	var (
		mu    sync.Mutex
		first error
		next  int
		wg    sync.WaitGroup
	)
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []schema.State
			var rbuf []result // the partition's results, expanded
			var pbuf []byte   // and packed, read back from the spill
			for {
				mu.Lock()
				if first != nil || next >= len(parts) {
					mu.Unlock()
					return
				}
				pt := parts[next]
				parts[next].g = group{} // dropped once applied
				next++
				mu.Unlock()
				rs, err := expand(pt, r.spill, &rbuf, &pbuf)
				var out partOut
				if err == nil {
					sortResults(rs)
					out, err = r.statePartition(pt.key, rs, &buf)
				}
				var n int
				if err == nil {
					n, err = r.torrentPartition(pt.key, out.torrents)
				}
				if err == nil {
					err = ctx.Err()
				}
				prog.Add(1)
				mu.Lock()
				if err != nil {
					if first == nil {
						first = err
					}
				} else {
					st.add(out, n)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	prog.Done()
	if first != nil {
		return st, first
	}
	ph = r.phase("merge: staging the leases and peers tables")
	defer ph.End()
	st.LeasesReleased = len(st.released)
	// A lease released was live: none of them is among those pruned.
	st.LeasesPruned = r.leases.Expired(r.now)
	if st.LeasesReleased+st.LeasesPruned > 0 {
		sortHashes(st.released)
		if err := r.leases.Write(r.tx, st.released, r.now); err != nil {
			return st, fmt.Errorf("merge: %w", err)
		}
	}
	if err := r.peers.stage(r.tx); err != nil {
		return st, err
	}
	st.PeerRows = len(r.peers.rows)
	st.released = nil
	return st, nil
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
