package dedup

import (
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

// TestDedupFolderArrowStreams: a folder named as INPUT contributes its
// Arrow IPC streams (*.arrows, as capture -o - > in/x.arrows writes
// them, and *.arrow) beside its Parquet files, each read as a file named
// so is: a whole one applied, one cut mid-message applied up to its last
// whole batch, one a stream is still written into (its writer's flock)
// skipped, the run partial (exit 3) saying so. Other names are skipped.
// Applied again once the writer is done, only the skipped one is new.
func TestDedupFolderArrowStreams(t *testing.T) {
	whole, cutObs, busyObs, pq := genObs(90, 300, 100), genObs(91, 300, 100), genObs(92, 200, 80), genObs(93, 200, 80)
	wholeStream, _ := cutCapture(t, whole)
	cutStream, ends := cutCapture(t, cutObs)
	busyStream, _ := cutCapture(t, busyObs)
	f := inputdirtest.Build(t, inputdirtest.Contents{Parquet: readBack(t, writeObs(t, t.TempDir(), pq)),
		Whole: wholeStream, Cut: cutStream[:ends[1]+20], Busy: busyStream})
	in, busy := f.Dir, f.Busy

	data := filepath.Join(t.TempDir(), "ds")
	st, err := run(t, data, nil, in+"/")
	for _, want := range []string{busy + ": still being written by ", f.Cut + ": the Arrow IPC stream was cut mid-message after 200 complete rows, which were applied"} {
		if exitcode.Of(err) != exitcode.Partial || !strings.Contains(err.Error(), want) {
			t.Fatalf("err = %v (exit %d), want exit 3 saying %q", err, exitcode.Of(err), want)
		}
	}
	if st.Inputs != 3 || st.InputsBusy != 1 || st.Commits != 1 || st.Observations != int64(len(whole)+200+len(pq)) {
		t.Fatalf("stats %+v, want 3 inputs (1 busy skipped) in one commit, %d observations", st, len(whole)+200+len(pq))
	}
	compare(t, readState(t, data), truth(whole, cutObs[:200], pq))

	f.Release()
	st, err = run(t, data, nil, in)
	if err != nil || st.Inputs != 4 || st.InputsSkipped != 3 || st.InputsBusy != 0 || st.Observations != int64(len(busyObs)) {
		t.Fatalf("again, its writer done: %+v, %v; want only %s applied", st, err, busy)
	}
	compare(t, readState(t, data), truth(whole, cutObs[:200], pq, busyObs))
	if st, err := run(t, data, nil, in); err != nil || st.Commits != 0 || st.InputsSkipped != 4 {
		t.Fatalf("a third time: %+v, %v; want a no-op", st, err)
	}
}

// TestDedupEmptyFolderNothingToDo: a folder named as INPUT that holds no
// input file (no capture has finished yet) is nothing to do: no error,
// no commit; when every INPUT is such a folder the run opens and makes
// nothing, unless DIR/inbox/ holds a leftover, which it applies as a bare
// run does. An empty file, empty stdin and a missing path stay bad input,
// and so does a DIR that a run with input refuses (a folder of other
// files, one whose parent is missing): a typo, told at once.
func TestDedupEmptyFolderNothingToDo(t *testing.T) {
	obs := genObs(94, 200, 60)
	for _, tt := range []struct {
		name     string
		existing bool     // DIR holds a dataset first
		inputs   []string // "empty", "list" (only notes.txt), "obs" (a Parquet file), "blank" (an empty file), "missing", "-"
		leftover bool     // DIR/inbox/ holds a leftover spool of obs
		code     int
		commits  int
		where    string // DIR: "" a new folder; "theirs" a folder of other files; "orphan" a folder in a missing one
	}{
		{"empty folder, no dataset", false, []string{"empty"}, false, 0, 0, ""},
		{"empty folder, a folder of other files", false, []string{"empty"}, false, 2, 0, "theirs"},
		{"empty folder, no parent folder", false, []string{"empty"}, false, 2, 0, "orphan"},
		{"empty folder, a dataset", true, []string{"empty"}, false, 0, 0, ""},
		{"folders of no input file", true, []string{"empty", "list"}, false, 0, 0, ""},
		{"an empty folder and a file", false, []string{"empty", "obs"}, false, 0, 1, ""},
		{"an empty folder and a leftover", true, []string{"empty"}, true, 0, 1, ""},
		{"an empty file", true, []string{"empty", "blank"}, false, 2, 0, ""},
		{"a missing path", true, []string{"empty", "missing"}, false, 2, 0, ""},
		{"empty stdin", true, []string{"empty", "-"}, false, 2, 0, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			paths := inputdirtest.Nothing(t, dir)
			paths["obs"] = writeObs(t, dir, obs)
			data := filepath.Join(dir, "ds")
			switch tt.where {
			case "theirs":
				if err := os.MkdirAll(filepath.Join(data, "notes"), 0o755); err != nil {
					t.Fatal(err)
				}
			case "orphan":
				data = filepath.Join(dir, "nope", "ds")
			}
			var want map[schema.Hash]schema.State
			if tt.existing {
				if _, err := run(t, data, nil, writeObs(t, dir, obs[:50])); err != nil {
					t.Fatal(err)
				}
				want = truth(obs[:50])
			}
			if tt.leftover {
				b, err := os.ReadFile(paths["obs"])
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(data, "inbox", "part-0123456789abcdef.spool"), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tt.commits > 0 {
				want = truth(obs)
				if tt.existing {
					want = truth(obs[:50], obs)
				}
			}
			var before map[string]string
			if tt.existing {
				before = fsutiltest.Tree(t, data)
			}
			var ins []string
			for _, k := range tt.inputs {
				ins = append(ins, paths[k])
			}
			st, err := run(t, data, func(o *Options) { o.Stdin = strings.NewReader("") }, ins...)
			if exitcode.Of(err) != tt.code || st.Commits != tt.commits {
				t.Fatalf("exit %d (%v), %d commits; want exit %d, %d commits", exitcode.Of(err), err, st.Commits, tt.code, tt.commits)
			}
			if tt.where == "theirs" {
				if ents, err := os.ReadDir(data); err != nil || len(ents) != 1 {
					t.Fatalf("%s holds %v (%v), want only the user's folder", data, ents, err)
				}
				return
			}
			if !tt.existing && tt.commits == 0 {
				if _, err := os.Lstat(data); !os.IsNotExist(err) {
					t.Fatalf("%s made (%v), want nothing made", data, err)
				}
				return
			}
			if tt.commits == 0 && tt.code == 0 {
				if after := fsutiltest.Tree(t, data); !maps.Equal(before, after) {
					t.Fatalf("the dataset changed:\n%q\nwas\n%q", after, before)
				}
			}
			compare(t, readState(t, data), want)
		})
	}
}

// TestDedupFolderFIFO: a FIFO in a folder named as INPUT, named like an
// Arrow stream, is bad input (exit 2) that names it, as merge says of
// one (TestMergeFolderFIFO): a FIFO is read as a stream only when named
// as an INPUT itself (TestPipeNamedAsInput). Nothing opens it: the run
// used to block in the file-in-use check until someone wrote to it.
// Nothing is committed.
func TestDedupFolderFIFO(t *testing.T) {
	in := t.TempDir()
	writeObs(t, in, genObs(95, 100, 40))
	fifo := filepath.Join(in, "b.arrows")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	data := filepath.Join(t.TempDir(), "ds")
	type ret struct {
		st  Stats
		err error
	}
	done := make(chan ret, 1)
	go func() {
		st, err := run(t, data, nil, in)
		done <- ret{st, err}
	}()
	// A bound on a hang, not a timing: the run takes milliseconds.
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	select {
	case r := <-done:
		if exitcode.Of(r.err) != exitcode.Usage || !strings.Contains(r.err.Error(), fifo+": not a regular file") || r.st.Commits != 0 {
			t.Fatalf("%+v, %v (exit %d); want exit 2 naming %s, no commit", r.st, r.err, exitcode.Of(r.err), fifo)
		}
	case <-timer.C:
		// Let the blocked open return, so that the test ends.
		if f, err := os.OpenFile(fifo, os.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		<-done
		t.Fatal("dedup blocked on a FIFO in the folder")
	}
}

// TestDedupOnlyBusyKeepsCounts: a run whose only input is a stream still
// being written (skipped, exit 3) applies nothing, yet its summary gives
// the dataset's state_rows and snapshot, not 0 and 0 (its log line said
// "state_rows=0 snapshot=0" of a dataset holding rows), and counts the
// input it skipped (it said only inputs=0).
func TestDedupOnlyBusyKeepsCounts(t *testing.T) {
	first := genObs(95, 200, 80)
	busyStream, _ := cutCapture(t, genObs(96, 200, 80))
	f := inputdirtest.Build(t, inputdirtest.Contents{Busy: busyStream})
	data := filepath.Join(t.TempDir(), "ds")
	if _, err := run(t, data, nil, writeObs(t, t.TempDir(), first)); err != nil {
		t.Fatal(err)
	}
	want := int64(len(readState(t, data)))
	st, err := run(t, data, nil, f.Busy)
	if exitcode.Of(err) != exitcode.Partial {
		t.Fatalf("err = %v (exit %d), want exit 3", err, exitcode.Of(err))
	}
	if st.Commits != 0 || st.StateRows != want || st.Snapshot != 1 || st.Inputs != 0 || st.InputsBusy != 1 {
		t.Errorf("stats %+v: want no commit, state_rows %d, snapshot 1, no input read and 1 skipped busy", st, want)
	}
}
