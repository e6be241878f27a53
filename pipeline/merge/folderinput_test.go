package merge

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/infohash/infohash/formats/fsutil/fsutiltest"
	"github.com/infohash/infohash/formats/inputdir/inputdirtest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// folderResults plans the jobs of cutDataset and returns a failure with
// a peer to penalise for each.
func folderResults(t *testing.T, dir string) []schema.Result {
	t.Helper()
	var rs []schema.Result
	for i, j := range planJobs(t, dir, t0, 100) {
		at := t0 + minute + int64(i)*1000
		rs = append(rs, failure(j, schema.OutcomeHashMismatch, at,
			schema.PeerFailure{Addr: fmt.Sprintf("127.0.0.1:%d", 7000+i), Class: schema.OutcomeHashMismatch, At: at}))
	}
	if len(rs) != 24 {
		t.Fatalf("planned %d jobs, want 24", len(rs))
	}
	return rs
}

// TestMergeFolderArrowStreams: a folder named as RESULTS gives its
// Parquet files and its Arrow IPC streams (*.arrows, as fetch -o - >
// FILE writes them, and *.arrow), in any case, each read as a file named
// so is: a whole one applied, one cut mid-message applied up to its last
// whole batch, one a fetch still writes into (its flock) skipped, the run
// partial (exit 3) saying both. Other names are skipped. Merged again
// once the writer is done, only the skipped one is new.
func TestMergeFolderArrowStreams(t *testing.T) {
	dir := cutDataset(t)
	rs := folderResults(t, dir)
	whole, _ := inputdirtest.Stream(t, rs[6:12], 3)
	cut, ends := inputdirtest.Stream(t, rs[12:20], 4)
	busyStream, _ := inputdirtest.Stream(t, rs[20:24], 4)
	pq, err := os.ReadFile(writeResults(t, rs[:6]))
	if err != nil {
		t.Fatal(err)
	}
	f := inputdirtest.Build(t, inputdirtest.Contents{Parquet: pq, Whole: whole, Cut: cut[:ends[0]+30], Busy: busyStream})
	in, busy := f.Dir, f.Busy

	st, err := tryMerge(dir, t0+10*minute, in+"/")
	for _, want := range []string{busy + ": still being written by ", f.Cut + ": the stream was cut"} {
		if exitcode.Of(err) != exitcode.Partial || !strings.Contains(err.Error(), want) {
			t.Fatalf("err = %v (exit %d), want exit 3 saying %q", err, exitcode.Of(err), want)
		}
	}
	if st.Inputs != 3 || st.InputsBusy != 1 || !st.Committed || st.Results != 6+6+4 || st.Applied != 16 {
		t.Fatalf("stats %+v, want 3 inputs, 16 failures applied in one commit", st)
	}

	f.Release()
	st, err = tryMerge(dir, t0+11*minute, in)
	if err != nil || st.Inputs != 4 || st.InputsSkipped != 3 || st.Results != 4 || st.Applied != 4 {
		t.Fatalf("again, its writer done: %+v, %v; want only %s applied", st, err, busy)
	}
	if st, err := tryMerge(dir, t0+12*minute, in); err != nil || st.Committed || st.InputsSkipped != 4 {
		t.Fatalf("a third time: %+v, %v; want a no-op", st, err)
	}
}

// TestMergeEmptyFolderNothingToDo: a folder named as RESULTS that holds
// no results file (no fetch has finished yet) is nothing to do: exit 0,
// no commit, the dataset unchanged (NothingToApply says so first, and
// Run agrees); with a leftover in DIR/inbox/merge/ the run applies it as
// a bare run does. A bare run with no leftover, an empty file, empty
// stdin and a missing path stay bad input.
func TestMergeEmptyFolderNothingToDo(t *testing.T) {
	for _, tt := range []struct {
		name     string
		inputs   []string // "empty", "list" (only notes.txt), "res" (a results file), "blank" (an empty file), "missing", "-"
		leftover bool     // DIR/inbox/merge/ holds a leftover spool of res
		code     int
		results  int64
		nothing  bool // NothingToApply
	}{
		{"an empty folder", []string{"empty"}, false, 0, 0, true},
		{"folders of no results file", []string{"empty", "list"}, false, 0, 0, true},
		{"an empty folder and a file", []string{"empty", "res"}, false, 0, 6, false},
		{"an empty folder and a leftover", []string{"empty"}, true, 0, 6, false},
		{"a bare run and a leftover", nil, true, 0, 6, false},
		{"a bare run", nil, false, 2, 0, false},
		{"an empty file", []string{"empty", "blank"}, false, 2, 0, false},
		{"a missing path", []string{"empty", "missing"}, false, 2, 0, false},
		{"empty stdin", []string{"empty", "-"}, false, 2, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := cutDataset(t)
			rs := folderResults(t, data)
			dir := t.TempDir()
			paths := inputdirtest.Nothing(t, dir)
			paths["res"] = writeResults(t, rs[:6])
			if tt.leftover {
				b, err := os.ReadFile(paths["res"])
				if err != nil {
					t.Fatal(err)
				}
				os.MkdirAll(filepath.Join(data, inboxDir), 0o755)
				if err := os.WriteFile(filepath.Join(data, inboxDir, "part-0123456789abcdef.results"), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var ins []string
			for _, k := range tt.inputs {
				ins = append(ins, paths[k])
			}
			before := treeOf(t, data)
			if got := NothingToApply(data, ins); got != tt.nothing {
				t.Fatalf("NothingToApply = %v, want %v", got, tt.nothing)
			}
			o := DefaultOptions()
			o.Data, o.Now, o.Inputs, o.Stdin = data, tm(t0+10*minute), ins, strings.NewReader("")
			st, err := Run(t.Context(), o)
			if exitcode.Of(err) != tt.code || st.Results != tt.results || st.Committed != (tt.results > 0) {
				t.Fatalf("exit %d (%v), %+v; want exit %d, %d results", exitcode.Of(err), err, st, tt.code, tt.results)
			}
			if tt.results == 0 && tt.code == 0 {
				if after := treeOf(t, data); !maps.Equal(before, after) {
					t.Fatalf("the dataset changed:\n%q\nwas\n%q", after, before)
				}
			}
		})
	}
	if NothingToApply(filepath.Join(t.TempDir(), "nodata"), []string{t.TempDir()}) {
		t.Fatal("NothingToApply true for a --data that holds no dataset: want Run to say so")
	}
}

// treeOf is fsutiltest.Tree of dir, less the times of what every run
// changes (the folders, and the LOCK file every opening takes).
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	tree := fsutiltest.Tree(t, dir)
	for p, v := range tree {
		if strings.HasPrefix(v, "d") || filepath.Base(p) == "LOCK" {
			tree[p] = ""
		}
	}
	return tree
}

// TestMergeFolderFIFO: a FIFO in a folder named as RESULTS, named like a
// results file, is bad input (exit 2) that names it, as a FIFO can only
// be named as RESULTS itself (spooled); reading it would block the run
// for as long as nobody writes to it. Nothing is committed.
func TestMergeFolderFIFO(t *testing.T) {
	dir := cutDataset(t)
	rs := folderResults(t, dir)
	in := t.TempDir()
	pq, err := os.ReadFile(writeResults(t, rs[:6]))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(in, "a.parquet"), pq, 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(in, "b.arrows")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	type ret struct {
		st  Stats
		err error
	}
	done := make(chan ret, 1)
	go func() {
		st, err := tryMerge(dir, t0+10*minute, in)
		done <- ret{st, err}
	}()
	select {
	case r := <-done:
		if exitcode.Of(r.err) != exitcode.Usage || !strings.Contains(r.err.Error(), fifo+": not a regular file") || r.st.Committed {
			t.Fatalf("%+v, %v; want exit 2 naming %s, no commit", r.st, r.err, fifo)
		}
	case <-time.After(time.Minute): // a bound on a hang, not a speed
		// Unblock the reader so that the test ends.
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		t.Fatal("merge blocked on a FIFO in the folder")
	}
}

// TestMergeOnlyBusyKeepsSnapshot: a run whose only input is a stream
// fetch still writes (skipped, exit 3) commits nothing, yet its summary
// names the dataset's snapshot, not 0, and counts the input it skipped
// (it said only inputs=0).
func TestMergeOnlyBusyKeepsSnapshot(t *testing.T) {
	dir := cutDataset(t)
	rs := folderResults(t, dir)
	busyStream, _ := inputdirtest.Stream(t, rs[:4], 4)
	f := inputdirtest.Build(t, inputdirtest.Contents{Busy: busyStream})
	st, err := tryMerge(dir, t0+10*minute, f.Busy)
	if exitcode.Of(err) != exitcode.Partial {
		t.Fatalf("err = %v (exit %d), want exit 3", err, exitcode.Of(err))
	}
	if st.Committed || st.Snapshot < 1 || st.Inputs != 0 || st.InputsBusy != 1 {
		t.Errorf("stats %+v: want no commit, the dataset's snapshot, no input read and 1 skipped busy", st)
	}
}
