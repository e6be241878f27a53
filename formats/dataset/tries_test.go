package dataset

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// triesRun is what a test try sees: the test, the dataset, and how many
// times a competitor found the writer lock held.
type triesRun struct {
	t         *testing.T
	d         *Dataset
	lockedOut int
}

// stage01 stages partition 01 in tx and asks for the commit.
func (r *triesRun) stage01(tx *Tx) (bool, error) {
	r.t.Helper()
	info, err := WriteStaged(tx, TableState, "01", []schema.State{{InfoHash: schema.Hash{1, 1}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
	if err != nil {
		r.t.Fatal(err)
	}
	tx.SetPartition(TableState, "01", []FileInfo{info})
	return true, nil
}

// compete commits partition key as another writer that does not wait
// for the lock.
func (r *triesRun) compete(key string) {
	r.t.Helper()
	if err := commitKey(r.d, key, 0); errors.Is(err, ErrLocked) {
		r.lockedOut++
	} else if err != nil {
		r.t.Fatalf("competitor: %v", err)
	}
}

// readBase00 reads partition 00 of tx's base snapshot.
func readBase00(tx *Tx) error {
	st := tx.Base().Table(TableState)
	_, err := ReadFile[schema.State](tx.d.FilePath(st, "00", st.Partitions["00"][0]))
	return err
}

// TestTriesRun: the loop of tries re-applies a try that met a base
// collected while in use (Tx.Moved) or a commit conflict, counting and
// logging each, gives up with the locked error after MaxReapply lost
// races (or holds the lock with a lock wait), stops at any other error
// without a retry, names the stage in front of a commit's damaged-file
// error, and hands back a commit that failed after the commit point as
// committed. Every run ends with its transactions aborted.
func TestTriesRun(t *testing.T) {
	const collected = `msg="test: the snapshot being read was collected by later commits; starting over on the new one" attempt=1`
	const conflict = `msg="test: dataset moved on while testing; testing again" attempt=1`
	disk := errors.New("disk on fire")
	tests := []struct {
		name string
		wait time.Duration
		// try is the work of one try; the dataset's snapshot 1 holds
		// partition 00.
		try       func(r *triesRun, tx *Tx, attempt int) (bool, error)
		commit    func(context.Context, *Tx) (*Manifest, error) // Tries.Commit
		tries     int
		conflicts int
		lockedOut int
		snapshot  int64   // CURRENT after the run
		m         int64   // the snapshot Run returned (0: none)
		after     bool    // with an AfterCommitError
		err       string  // how Run's error begins ("": none)
		is        []error // what it wraps
		damaged   bool    // it wraps a DamagedFileError
		log       string  // a line of the log ("": no try re-applied)
	}{
		{name: "commits at once", tries: 1, snapshot: 2, m: 2,
			try: func(r *triesRun, tx *Tx, _ int) (bool, error) { return r.stage01(tx) }},
		{name: "nothing to commit", tries: 1, snapshot: 1,
			try: func(r *triesRun, tx *Tx, _ int) (bool, error) { return false, nil }},
		{name: "a base collected while in use re-applies", tries: 2, conflicts: 1, snapshot: 6, m: 6, log: collected,
			try: func(r *triesRun, tx *Tx, attempt int) (bool, error) {
				if attempt == 0 {
					for k := range 4 { // the default --keep (3) collects the base
						r.compete(fmt.Sprintf("%02x", 0x80+k))
					}
					err := readBase00(tx)
					if !errors.Is(err, fs.ErrNotExist) {
						r.t.Fatalf("reading the collected base: %v, want a missing file", err)
					}
					return false, tx.Moved(err)
				}
				return r.stage01(tx)
			}},
		{name: "a missing file of a current base stops", tries: 1, snapshot: 1, err: "open /gone: file does not exist",
			is: []error{fs.ErrNotExist},
			try: func(r *triesRun, tx *Tx, _ int) (bool, error) {
				return false, tx.Moved(fmt.Errorf("open /gone: %w", fs.ErrNotExist))
			}},
		{name: "a commit conflict re-applies", tries: 2, conflicts: 1, snapshot: 3, m: 3, log: conflict,
			try: func(r *triesRun, tx *Tx, attempt int) (bool, error) {
				if attempt == 0 {
					r.compete("80")
				}
				return r.stage01(tx)
			}},
		{name: "another error stops without a retry", tries: 1, snapshot: 1, err: "disk on fire", is: []error{disk},
			try: func(r *triesRun, tx *Tx, _ int) (bool, error) { return false, disk }},
		{name: "every race lost without a lock wait", tries: MaxReapply + 1, conflicts: MaxReapply,
			snapshot: 1 + MaxReapply + 1, err: "locked by another writer: ", is: []error{ErrLocked, ErrConflict}, log: conflict,
			try: func(r *triesRun, tx *Tx, attempt int) (bool, error) {
				r.compete(fmt.Sprintf("%02x", 0x80+attempt))
				return r.stage01(tx)
			}},
		{name: "a lock wait holds the lock after lost races", wait: time.Minute, tries: HoldLockAfter + 1,
			conflicts: HoldLockAfter, lockedOut: 1, snapshot: 1 + HoldLockAfter + 1, m: 1 + HoldLockAfter + 1, log: conflict,
			try: func(r *triesRun, tx *Tx, attempt int) (bool, error) {
				r.compete(fmt.Sprintf("%02x", 0x80+attempt))
				return r.stage01(tx)
			}},
		{name: "a commit's damaged file names the stage", tries: 1, snapshot: 1, err: "test: ", damaged: true,
			try: func(r *triesRun, tx *Tx, _ int) (bool, error) {
				st := tx.Base().Table(TableState)
				if err := os.Truncate(tx.d.FilePath(st, "00", st.Partitions["00"][0]), 10); err != nil {
					r.t.Fatal(err)
				}
				return r.stage01(tx)
			}},
		{name: "a failure after the commit point is a commit", tries: 1, snapshot: 2, m: 2, after: true,
			try: func(r *triesRun, tx *Tx, _ int) (bool, error) {
				dir := r.d.Dir
				syncDir = func(d string) error {
					if d == dir {
						return &os.PathError{Op: "sync", Path: d, Err: syscall.EIO}
					}
					return nil
				}
				return r.stage01(tx)
			}},
		{name: "a commit hook that commits nothing", tries: 1, snapshot: 1, m: 1,
			commit: func(_ context.Context, tx *Tx) (*Manifest, error) { tx.Abort(); return tx.Base(), nil },
			try:    func(r *triesRun, tx *Tx, _ int) (bool, error) { return r.stage01(tx) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Cleanup(func() { syncDir = realSyncDir })
			var log bytes.Buffer
			defer slog.SetDefault(slog.Default())
			slog.SetDefault(slog.New(slog.NewTextHandler(&log, nil)))
			d := openNew(t)
			commitRows(t, d, "00", []schema.State{{InfoHash: schema.Hash{0, 1}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
			r := &triesRun{t: t, d: d}
			tries, conflicts := 0, 0
			o := Tries{Stage: "test", LockWait: tt.wait, Conflicts: &conflicts, Commit: tt.commit,
				Conflict: "dataset moved on while testing; testing again"}
			m, after, err := o.Run(context.Background(), d, func(tx *Tx, attempt int) (bool, error) {
				if tries++; attempt != tries-1 {
					t.Errorf("try %d is attempt %d", tries, attempt)
				}
				return tt.try(r, tx, attempt)
			})
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("Run: %v", err)
			case tt.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.err)):
				t.Fatalf("Run = %v, want an error beginning %q", err, tt.err)
			}
			for _, target := range tt.is {
				if !errors.Is(err, target) {
					t.Errorf("Run = %v, want it to wrap %v", err, target)
				}
			}
			if _, ok := errors.AsType[*DamagedFileError](err); ok != tt.damaged {
				t.Errorf("Run = %v: a damaged file: %v, want %v", err, ok, tt.damaged)
			}
			if err != nil && (m != nil || after != nil) {
				t.Errorf("Run failed with snapshot %v, after %v: want neither", m, after)
			}
			if got := int64(0); m != nil {
				if got = m.Snapshot; got != tt.m {
					t.Errorf("Run returned snapshot %d, want %d", got, tt.m)
				}
			} else if tt.m != 0 {
				t.Errorf("Run returned no snapshot, want %d", tt.m)
			}
			if (after != nil) != tt.after || after != nil && after.Snapshot != tt.m {
				t.Errorf("after commit: %v, want one: %v", after, tt.after)
			}
			if tries != tt.tries || conflicts != tt.conflicts || r.lockedOut != tt.lockedOut {
				t.Errorf("%d tries, %d re-applied, competitor locked out %d times; want %d, %d and %d",
					tries, conflicts, r.lockedOut, tt.tries, tt.conflicts, tt.lockedOut)
			}
			cur, cerr := d.Current()
			if cerr != nil || cur.Snapshot != tt.snapshot {
				t.Errorf("CURRENT is snapshot %v (%v), want %d", cur, cerr, tt.snapshot)
			}
			if tt.log != "" && !strings.Contains(log.String(), tt.log) {
				t.Errorf("the log lacks %s:\n%s", tt.log, log.String())
			}
			if tt.log == "" && strings.Contains(log.String(), `msg="test: `) {
				t.Errorf("the log says a try was re-applied:\n%s", log.String())
			}
			if s := d.Staged(); len(s.Paths) != 0 {
				t.Errorf("staging folders left behind: %v", s.Paths)
			}
			l, err := LockWriter(context.Background(), d.Dir, 0)
			if err != nil {
				t.Fatalf("the lock is still held after Run: %v", err)
			}
			l.Release()
		})
	}
}
