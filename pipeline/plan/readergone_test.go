package plan

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/internal/exitcode"
)

// TestReaderGoneBeforeCommitLeasesNothing: an output written after the
// commit (stdout with -o -, a FIFO) whose reader has gone by the commit
// would take none of the jobs: the run commits nothing (no lease, no new
// snapshot) and fails with ErrReaderGone (exit 141). With the reader
// there, the leases are committed and the jobs delivered.
func TestReaderGoneBeforeCommitLeasesNothing(t *testing.T) {
	// toStdout plans to -o - on a pipe whose reader is closed (gone) or
	// kept, read to the end.
	toStdout := func(t *testing.T, o *Options, gone bool) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close(); w.Close() })
		if gone {
			r.Close()
		} else {
			go func() { _, _ = r.Read(make([]byte, 1<<20)) }()
		}
		o.Output, o.Stdout = "-", w
	}
	// toFIFO plans to -o FIFO, whose reader opened it (so that the run's
	// open returns) and, when gone, closed it again before the commit.
	toFIFO := func(t *testing.T, o *Options, gone bool) {
		fifo := filepath.Join(t.TempDir(), "jobs")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skip("mkfifo:", err)
		}
		r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		o.Output = fifo
		o.OpenOutput = func(p string) (*fsutil.File, error) {
			f, err := fsutil.CreateOutput(p)
			if gone {
				r.Close()
			} else {
				go func() { _, _ = r.Read(make([]byte, 1<<20)) }()
			}
			return f, err
		}
	}
	for _, tt := range []struct {
		name string
		to   func(t *testing.T, o *Options, gone bool)
		gone bool
	}{
		{"stdout, reader gone", toStdout, true},
		{"stdout, reader there", toStdout, false},
		{"FIFO, reader gone", toFIFO, true},
		{"FIFO, reader there", toFIFO, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := tenNew(t)
			o := planOptions(t, dir)
			tt.to(t, &o, tt.gone)
			st, err := Run(context.Background(), o)
			leases, snap := leasesAt(t, dir)
			if !tt.gone {
				if err != nil || len(leases) != 10 || !st.Committed || st.Planned != 10 || st.Dropped != 0 || st.ReaderGone {
					t.Fatalf("reader there: err %v, %d leases (committed %v), stats %+v, want 10 leases and jobs planned", err, len(leases), st.Committed, st)
				}
				return
			}
			if !errors.Is(err, ErrReaderGone) || exitcode.Of(err) != exitcode.BrokenPipe {
				t.Fatalf("err %v (exit %d), want ErrReaderGone, exit 141", err, exitcode.Of(err))
			}
			if len(leases) != 0 || snap != 1 || st.Committed {
				t.Fatalf("%d leases at snapshot %d (committed %v), want none and no new snapshot", len(leases), snap, st.Committed)
			}
			// The counters say what happened: 10 jobs dropped, none
			// planned, leased or delivered, on the snapshot planned from.
			want := Stats{Dropped: 10, ReaderGone: true, Snapshot: 1}
			got := Stats{Dropped: st.Dropped, ReaderGone: st.ReaderGone, Snapshot: st.Snapshot,
				Planned: st.Planned, PlannedNew: st.PlannedNew, LeaseID: st.LeaseID, LeaseUntil: st.LeaseUntil,
				ColdSweepNext: st.ColdSweepNext - st.ColdSweepStart}
			if got != want || st.Due != 10 {
				t.Fatalf("stats %+v (due %d), want %+v and the 10 due hashes counted", got, st.Due, want)
			}
		})
	}
}
