package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/tools/badpeers"
)

func writeRows[T any](t *testing.T, path string, rows []T) {
	t.Helper()
	w, err := rowio.Create[T](path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// jobStream is an Arrow IPC stream of jobs as fetch reads it on stdin, in
// record batches of 100 rows: more than one read.
func jobStream(t *testing.T, jobs []schema.Job) *bytes.Buffer {
	t.Helper()
	var stream bytes.Buffer
	w, err := rowio.Create[schema.Job]("-", &stream)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(jobs); i += 100 {
		if err := w.Write(jobs[i:min(i+100, len(jobs))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return &stream
}

func readResults(t *testing.T, path string) map[schema.Hash]schema.Result {
	t.Helper()
	r, err := rowio.Open[schema.Result](path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	m := map[schema.Hash]schema.Result{}
	for _, row := range rows {
		if _, dup := m[row.InfoHash]; dup {
			t.Fatalf("two results for %x", row.InfoHash)
		}
		m[row.InfoHash] = row
	}
	return m
}

// TestRunParquet: jobs in, results out, leases honoured: an expired lease
// is not attempted and makes the run partial.
func TestRunParquet(t *testing.T) {
	dir := t.TempDir()
	tor := badpeers.NewTorrent(10, 3, 900)
	good := startPeer(t, badpeers.Good, tor)
	reject := startPeer(t, badpeers.Reject)
	other := badpeers.NewTorrent(11, 1, 5)
	stale := badpeers.NewTorrent(12, 1, 5)
	future := time.Now().Add(time.Hour).UnixMilli()
	jobs := []schema.Job{
		{InfoHash: tor.InfoHash, HashType: 1, Attempt: 2, LeaseID: "a", LeaseUntil: future, Peers: []string{good.Addr()}},
		{InfoHash: other.InfoHash, HashType: 1, Attempt: 1, LeaseID: "b", LeaseUntil: future, Peers: []string{reject.Addr()}},
		{InfoHash: stale.InfoHash, HashType: 1, Attempt: 1, LeaseID: "c", LeaseUntil: time.Now().Add(-time.Minute).UnixMilli(), Peers: []string{good.Addr()}},
	}
	in, out := filepath.Join(dir, "jobs.parquet"), filepath.Join(dir, "results.parquet")
	writeRows(t, in, jobs)
	o := testOptions()
	o.Input, o.Output = in, out
	st, err := Run(context.Background(), o)
	if exitcode.Of(err) != exitcode.Partial {
		t.Fatalf("err %v (exit %d), want partial", err, exitcode.Of(err))
	}
	if st.Jobs != 3 || st.Attempted != 2 || st.LeaseExpired != 1 || st.Verified != 1 {
		t.Fatalf("stats %+v", st)
	}
	res := readResults(t, out)
	if len(res) != 2 {
		t.Fatalf("%d results, want 2", len(res))
	}
	ok := res[tor.InfoHash]
	checkResult(t, jobs[0], ok)
	if ok.Outcome != schema.OutcomeOK || ok.NameOr() != tor.Name || len(ok.Files) != 3 || !bytes.Equal(ok.InfoBytes, tor.Info) {
		t.Fatalf("ok row: %s %q %d files", ok.Outcome, ok.NameOr(), len(ok.Files))
	}
	rej := res[other.InfoHash]
	checkResult(t, jobs[1], rej)
	if rej.Outcome != schema.OutcomeRejected || len(rej.PeerFailures) != 1 || rej.PeerFailures[0].Addr != reject.Addr() {
		t.Fatalf("rejected row: %s %+v", rej.Outcome, rej.PeerFailures)
	}
}

// TestRunHashOnlyArrow: a bare list of hashes on stdin (Arrow) is a valid
// input; results go to stdout as Arrow.
func TestRunHashOnlyArrow(t *testing.T) {
	tor := badpeers.NewTorrent(13, 1, 5)
	good := startPeer(t, badpeers.Good, tor)
	type hashOnly struct {
		InfoHash schema.Hash `parquet:"info_hash"`
	}
	var stdin, stdout bytes.Buffer
	w, err := rowio.Create[hashOnly]("-", &stdin)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]hashOnly{{tor.InfoHash}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	o := testOptions()
	o.Input, o.Output, o.Stdin, o.Stdout = "-", "-", &stdin, &stdout
	o.Peers = []string{good.Addr()}
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	r, err := rowio.Open[schema.Result]("-", &stdout)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := r.ReadAll()
	if err != nil || len(rows) != 1 || rows[0].Outcome != schema.OutcomeOK || rows[0].HashType != schema.HashV1 {
		t.Fatalf("rows %+v, err %v", rows, err)
	}
}

// TestRunBadInput: unreadable input is exit 2 and no output file appears.
func TestRunBadInput(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "jobs.parquet"), filepath.Join(dir, "out.parquet")
	if err := os.WriteFile(in, []byte("not parquet"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := testOptions()
	o.Input, o.Output = in, out
	_, err := Run(context.Background(), o)
	if exitcode.Of(err) != exitcode.Usage {
		t.Fatalf("err %v, want a usage error", err)
	}
	if _, serr := os.Stat(out); !errors.Is(serr, os.ErrNotExist) {
		t.Fatalf("output exists after bad input: %v", serr)
	}
}

// stopWhenBusy stops a run with two workers once stall has accepted two
// connections more than it had: the good job (the first) is then done,
// its worker having moved on to a stalling job. The run stops as at its
// deadline (deadline: through passDeadline) or at an interrupt (the
// context returned is cancelled); that context ends with the test.
// Stopping on this event, not after a fixed time, keeps a slow machine
// from reaching the stop before the good job is done (a 2 s deadline,
// and 300 ms before it, were such a window).
func stopWhenBusy(t *testing.T, o *Options, stall *badpeers.Peer, deadline bool) context.Context {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	before := stall.Accepted()
	wait := func(stop func()) {
		go func() {
			for stall.Accepted() < before+2 && ctx.Err() == nil {
				time.Sleep(time.Millisecond)
			}
			stop()
		}()
	}
	if deadline {
		o.passDeadline = wait
	} else {
		wait(cancel)
	}
	return ctx
}

// stallsOutlast is the job and peer timeout of tests whose stalling
// peers must end only by the run's stop: longer than hangGuard, so that a
// run that waits for them is caught hanging, not let off at a timeout.
const stallsOutlast = 2 * hangGuard

// hangGuard bounds how long those tests wait for Run to stop. It is no
// speed goal (those live in benchmarks), only a bound on a hang: Run
// stops in seconds, even on a loaded machine under -race.
const hangGuard = 5 * time.Minute

// runGuarded is Run, failing the test if Run has not returned within
// hangGuard.
func runGuarded(t *testing.T, ctx context.Context, o Options) (Stats, error) {
	t.Helper()
	type ran struct {
		st  Stats
		err error
	}
	done := make(chan ran, 1)
	go func() {
		st, err := Run(ctx, o)
		done <- ran{st, err}
	}()
	select {
	case r := <-done:
		return r.st, r.err
	case <-time.After(hangGuard):
		t.Fatalf("Run has not stopped after %s: it waits for the stalls", hangGuard)
		return Stats{}, nil
	}
}

// TestRunDeadlineAndInterrupt: when the run stops, finished results are
// committed, unfinished jobs are absent, the exit status says why, and
// every job of the input is counted, the many never read included. The
// run does not wait for the stalling peers, which end only by the stop.
func TestRunDeadlineAndInterrupt(t *testing.T) {
	tor := badpeers.NewTorrent(14, 1, 5)
	good := startPeer(t, badpeers.Good, tor)
	stall := startPeer(t, badpeers.Stall)
	jobs := []schema.Job{{InfoHash: tor.InfoHash, Peers: []string{good.Addr()}}}
	for i := range 2000 { // far more than one read: most are never read
		jobs = append(jobs, schema.Job{InfoHash: schema.Hash{byte(i>>8) + 1, byte(i)}, Peers: []string{stall.Addr()}})
	}
	tests := []struct {
		name     string
		arrow    bool
		deadline bool // the deadline passes once the good job is done, else an interrupt comes then
		want     int
	}{
		{"deadline", false, true, exitcode.Partial},
		{"interrupt", false, false, exitcode.Interrupted},
		{"deadline stdin", true, true, exitcode.Partial},
		{"interrupt stdin", true, false, exitcode.Interrupted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			in, out := filepath.Join(dir, "jobs.parquet"), filepath.Join(dir, "out.parquet")
			o := testOptions()
			if tt.arrow {
				in, o.Stdin = "-", jobStream(t, jobs)
			} else {
				writeRows(t, in, jobs)
			}
			o.Input, o.Output = in, out
			o.Timeout, o.PeerTimeout = stallsOutlast, stallsOutlast // the stalls end only by the stop
			o.Concurrency = 2
			st, err := runGuarded(t, stopWhenBusy(t, &o, stall, tt.deadline), o)
			if exitcode.Of(err) != tt.want {
				t.Fatalf("err %v (exit %d), want exit %d", err, exitcode.Of(err), tt.want)
			}
			res := readResults(t, out)
			if len(res) != 1 || res[tor.InfoHash].Outcome != schema.OutcomeOK {
				t.Fatalf("results %d, want only the finished ok one", len(res))
			}
			if st.Jobs != int64(len(jobs)) || st.Attempted != 1 || st.Unfinished != int64(len(jobs)-1) || st.LeaseExpired != 0 {
				t.Fatalf("jobs %d attempted %d unfinished %d expired %d, want %d jobs, 1 attempted, the rest unfinished",
					st.Jobs, st.Attempted, st.Unfinished, st.LeaseExpired, len(jobs))
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("1 job attempted, %d jobs unfinished", len(jobs)-1)) {
				t.Fatalf("error %q does not count the attempted job and the unfinished ones", err)
			}
		})
	}
}

// TestRunStoppedStreamUncountable: a stopped run counts the rest of a
// stream by reading it; if the stream then breaks, or stays open without
// data, the finished results are still committed, within bounded time,
// and a warning says the counts fall short.
func TestRunStoppedStreamUncountable(t *testing.T) {
	tor := badpeers.NewTorrent(16, 1, 5)
	good := startPeer(t, badpeers.Good, tor)
	stall := startPeer(t, badpeers.Stall)
	jobs := []schema.Job{{InfoHash: tor.InfoHash, Peers: []string{good.Addr()}}}
	for i := range 1000 {
		jobs = append(jobs, schema.Job{InfoHash: schema.Hash{0xee, byte(i >> 8), byte(i)}, Peers: []string{stall.Addr()}})
	}
	stream := jobStream(t, jobs)
	defer func(g time.Duration) { drainGrace = g }(drainGrace)
	drainGrace = 500 * time.Millisecond
	tests := []struct {
		name  string
		stdin func(t *testing.T) io.Reader
	}{
		{"truncated", func(*testing.T) io.Reader { return bytes.NewReader(stream.Bytes()[:stream.Len()-200]) }},
		{"never ends", func(t *testing.T) io.Reader {
			pr, pw := io.Pipe()
			go pw.Write(stream.Bytes()[:stream.Len()/2])
			t.Cleanup(func() { pw.Close() })
			return pr
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			out := filepath.Join(t.TempDir(), "out.parquet")
			o := testOptions()
			o.Input, o.Output, o.Stdin = "-", out, tt.stdin(t)
			o.Timeout, o.PeerTimeout, o.Concurrency = stallsOutlast, stallsOutlast, 2 // the stalls end only by the stop
			o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			st, err := runGuarded(t, stopWhenBusy(t, &o, stall, true), o)
			if exitcode.Of(err) != exitcode.Partial {
				t.Fatalf("err %v (exit %d), want partial", err, exitcode.Of(err))
			}
			if res := readResults(t, out); len(res) != 1 {
				t.Fatalf("%d results, want the finished one", len(res))
			}
			if st.Jobs >= int64(len(jobs)) || st.Jobs != st.Attempted+st.Unfinished {
				t.Fatalf("stats %d jobs, %d attempted, %d unfinished", st.Jobs, st.Attempted, st.Unfinished)
			}
			if !strings.Contains(logs.String(), "could not count all the jobs") {
				t.Fatalf("no warning:\n%s", logs.String())
			}
		})
	}
}
