package dedup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

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
	in := filepath.Join(t.TempDir(), "in")
	if err := os.MkdirAll(filepath.Join(in, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	wholeStream, _ := cutCapture(t, whole)
	cutStream, ends := cutCapture(t, cutObs)
	busyStream, _ := cutCapture(t, busyObs)
	for name, b := range map[string][]byte{
		"a.arrows":     wholeStream,
		"sub/B.ARROW":  cutStream[:ends[1]+20],
		"c.arrows":     busyStream,
		"notes.txt":    []byte("not an input\n"),
		"d.arrows.bak": []byte("junk"),
	} {
		if err := os.WriteFile(filepath.Join(in, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeObs(t, in, pq)
	busy := filepath.Join(in, "c.arrows")
	lock, err := os.Open(busy)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}

	data := filepath.Join(t.TempDir(), "ds")
	st, err := run(t, data, nil, in+"/")
	for _, want := range []string{busy + ": still being written by ", filepath.Join(in, "sub/B.ARROW") + ": the Arrow IPC stream was cut mid-message after 200 complete rows, which were applied"} {
		if exitcode.Of(err) != exitcode.Partial || !strings.Contains(err.Error(), want) {
			t.Fatalf("err = %v (exit %d), want exit 3 saying %q", err, exitcode.Of(err), want)
		}
	}
	if st.Inputs != 3 || st.Commits != 1 || st.Observations != int64(len(whole)+200+len(pq)) {
		t.Fatalf("stats %+v, want 3 inputs in one commit, %d observations", st, len(whole)+200+len(pq))
	}
	compare(t, readState(t, data), truth(whole, cutObs[:200], pq))

	unix.Flock(int(lock.Fd()), unix.LOCK_UN)
	st, err = run(t, data, nil, in)
	if err != nil || st.Inputs != 4 || st.InputsSkipped != 3 || st.Observations != int64(len(busyObs)) {
		t.Fatalf("again, its writer done: %+v, %v; want only %s applied", st, err, busy)
	}
	compare(t, readState(t, data), truth(whole, cutObs[:200], pq, busyObs))
	if st, err := run(t, data, nil, in); err != nil || st.Commits != 0 || st.InputsSkipped != 4 {
		t.Fatalf("a third time: %+v, %v; want a no-op", st, err)
	}
}
