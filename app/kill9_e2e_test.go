package app

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// killHang bounds every wait for a kill point: a run that never reaches
// its point fails the test instead of hanging it.
const killHang = time.Minute

// killPoint says when killAt kills a run: once a line of its stderr (the
// run has --debug) holds line, or, with line "", once it has read more
// than half of stdin (a pipe the test writes: the run is still spooling).
type killPoint struct {
	name string
	line string
}

// killAt runs infohash with args and --stats-json naming a FIFO that no
// one opens, so that the run cannot end by itself (it blocks in open(2)
// once done); it SIGKILLs the run at kp. It fails the test unless the
// signal is what ended the run, and reports whether the kill came before
// the run's commit: DIR/CURRENT is what it was before the run.
func killAt(t *testing.T, data string, kp killPoint, stdin []byte, args ...string) (beforeCommit bool) {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "stats.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	current := filepath.Join(data, "CURRENT")
	was, err := os.ReadFile(current)
	if err != nil {
		t.Fatal(err)
	}
	args = append(args[:1:1], append([]string{"--debug", "--stats-json", fifo}, args[1:]...)...)
	cmd := exec.Command(retryBinary(t), args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var in io.WriteCloser
	if stdin != nil && kp.line != "" {
		cmd.Stdin = bytes.NewReader(stdin)
	} else if stdin != nil {
		if in, err = cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	at := make(chan struct{}) // the kill point is reached
	var errb bytes.Buffer
	read := make(chan struct{}) // stderr is read to its end
	go func() {
		defer close(read)
		sc := bufio.NewScanner(stderr)
		seen := false
		for sc.Scan() {
			errb.Write(append(sc.Bytes(), '\n'))
			if !seen && kp.line != "" && strings.Contains(sc.Text(), kp.line) {
				seen = true
				close(at)
			}
		}
	}()
	if in != nil {
		go func() {
			// The write returns once the run has read all of it but what
			// the pipe holds (64 KiB): it is spooling, its input not ended.
			if _, err := in.Write(stdin[:len(stdin)/2+1]); err == nil {
				close(at)
			}
		}()
	}
	reached := false
	select {
	case <-at:
		reached = true
	case <-read: // the run ended (or closed stderr) before its kill point
	case <-time.After(killHang):
	}
	cmd.Process.Signal(syscall.SIGKILL)
	if in != nil {
		in.Close()
	}
	<-read
	err = cmd.Wait()
	if !reached {
		t.Fatalf("infohash %s: never reached %s: %v\n%s", strings.Join(args, " "), kp.name, err, errb.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("infohash %s: ended by %v, not by the kill at %s\n%s", strings.Join(args, " "), err, kp.name, errb.String())
	}
	now, err := os.ReadFile(current)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(now, was)
}

// resultsBatches is rs as an Arrow IPC stream of record batches of n
// rows, as fetch streams them.
func resultsBatches(t *testing.T, rs []schema.Result, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := rowio.Create[schema.Result]("-", &buf)
	if err != nil {
		t.Fatal(err)
	}
	for b := range slices.Chunk(rs, n) {
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestKill9LosesNothing kills plan-retries and merge (-9) at points in
// their work, each an event the test waits for: before the commit (the
// jobs picked; merge's input half spooled, read whole, applied) and after
// it (the leases committed, the run done). After plan-retries dies, every
// hash is planned again once the leases end; a merge that dies is re-run
// and the result equals a clean run's: each fetch result is applied
// exactly once. Every kill must end a live run, and some kill of each
// command must come before its commit. These results are leased, so a
// re-run would drop a result applied before as late or stale even
// without merge's ledger: pipeline/merge's TestLedgerStopsAReappliedInput
// is the test that fails when the ledger does not skip an applied input.
func TestKill9LosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("kills the binary at points in its work")
	}
	data := filepath.Join(t.TempDir(), "ih")
	hs := seedHashes(t, data, 20000, 2)
	at := time.Date(2026, 3, 1, 1, 0, 0, 0, time.UTC)
	planned := killPoint{"the jobs picked", "plan-retries: planned"}
	points := []killPoint{planned, {"the leases committed", "plan-retries: commit"}, planned,
		{"the run done", "plan-retries: done"}, planned, planned}
	before := 0
	for i, kp := range points {
		if killAt(t, data, kp, nil, "plan-retries", "--data", data, "--far-now",
			"--now", at.Add(time.Duration(i)*time.Minute).Format(time.RFC3339), "--limit", "3000",
			"-o", filepath.Join(t.TempDir(), "jobs.parquet")) {
			before++
		}
	}
	t.Logf("plan-retries killed %d of %d times before its commit", before, len(points))
	if before == 0 {
		t.Fatalf("no kill of plan-retries came before its commit")
	}
	// Once every lease (2h) has ended, every hash is due again.
	after := at.Add(3 * time.Hour)
	jobs := decodeJobs(t, mustRun(t, nil, "plan-retries", "--data", data, "--far-now", "--now", after.Format(time.RFC3339), "--limit", "100000", "-o", "-"))
	if len(jobs) != len(hs) {
		t.Fatalf("after the leases ended, %d of %d hashes were planned", len(jobs), len(hs))
	}

	// A clean merge of the results, on a copy, is the reference.
	results := resultsBatches(t, fakeFetch(jobs, after.Add(time.Minute)), 1000)
	resFile := filepath.Join(t.TempDir(), "results.arrow")
	os.WriteFile(resFile, results, 0o644)
	clean := filepath.Join(t.TempDir(), "clean")
	if out, err := exec.Command("cp", "-a", data, clean).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	mergeAt := after.Add(2 * time.Minute).Format(time.RFC3339)
	mustRun(t, nil, "merge", "--data", clean, "--far-now", "--now", mergeAt, resFile)
	want := stateCSV(t, clean)

	points = []killPoint{{"its input half spooled", ""}, {"its input read", "merge: read input"},
		{"its results applied", "merge: applied"}, {"the run done", "merge: done"}}
	before = 0
	for _, kp := range points {
		if killAt(t, data, kp, results, "merge", "--data", data, "--far-now", "--now", mergeAt, "-") {
			before++
		}
	}
	t.Logf("merge killed %d of %d times before its commit", before, len(points))
	if before == 0 {
		t.Fatalf("no kill of merge came before its commit")
	}
	mustRun(t, nil, "merge", "--data", data, "--far-now", "--now", mergeAt, resFile)
	ents, _ := os.ReadDir(filepath.Join(data, "inbox", "merge"))
	partial := 0
	for _, e := range ents {
		// A spool cut short by a kill is set aside as partial-* (the
		// whole batches it had read), not applied: the re-run re-sent
		// the whole input.
		if !strings.HasPrefix(e.Name(), "partial-") {
			t.Errorf("spooled input left behind: %s", e.Name())
		}
		partial++
	}
	if partial == 0 {
		t.Errorf("no partial-* spool: the kill as merge spooled its input came after the spool")
	}
	if got := stateCSV(t, data); got != want {
		t.Fatalf("state after killed merges differs from a clean merge")
	}
}
