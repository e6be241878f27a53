package app

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/internal/interrupt"
	"github.com/infohash/infohash/tools/loadgen"
)

// slowWriter takes each write after delay, or never while block is open.
type slowWriter struct {
	delay time.Duration
	block chan struct{}
}

func (s slowWriter) Write(p []byte) (int, error) {
	if s.block != nil {
		<-s.block
	}
	time.Sleep(s.delay)
	return len(p), nil
}

// hangGuard bounds how long a test waits for what must end by itself
// (deliver giving up on a run). It is no speed goal (those live in
// benchmarks): only a bound on a hang, far past what any load explains.
const hangGuard = 2 * time.Minute

// deliverGuarded is deliver, failing the test if deliver has not
// returned within hangGuard.
func deliverGuarded(t *testing.T, ctx context.Context, out string, stdout io.Writer, run func(output) error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- deliver(ctx, "test", out, stdout, run) }()
	select {
	case err := <-done:
		return err
	case <-time.After(hangGuard):
		t.Fatalf("deliver has not returned after %s", hangGuard)
		return nil
	}
}

// TestDeliverGrace: after the stop (parent cancelled), deliver waits for
// a run whose writes go through, however slowly, and gives up on one
// whose write has been blocked for streamGrace, with exit 130: not
// before the grace (a wait of at least streamGrace), and because of it
// (the error says so); how soon after is not timed (hangGuard only).
func TestDeliverGrace(t *testing.T) {
	defer func(g time.Duration) { streamGrace = g }(streamGrace)
	streamGrace = 300 * time.Millisecond
	tests := []struct {
		name      string
		out       string
		w         slowWriter
		writes    int // of 64 KiB, after the stop
		undeliver bool
	}{
		{name: "reader takes nothing", out: "-", w: slowWriter{block: make(chan struct{})}, writes: 1, undeliver: true},
		{name: "slow reader", out: "-", w: slowWriter{delay: 50 * time.Millisecond}, writes: 20},
		{name: "nothing left to write", out: "-", w: slowWriter{}, writes: 0},
		{name: "a file", out: "x.parquet", w: slowWriter{delay: 50 * time.Millisecond}, writes: 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.w.block != nil {
				defer close(tt.w.block)
			}
			ctx, cancel := context.WithCancel(t.Context())
			start := time.Now()
			err := deliverGuarded(t, ctx, tt.out, tt.w, func(dst output) error {
				cancel()
				for range tt.writes {
					if _, err := dst.stdout.Write(make([]byte, 64<<10)); err != nil {
						return err
					}
				}
				return nil
			})
			took := time.Since(start)
			if !tt.undeliver {
				if err != nil {
					t.Fatalf("err %v after %s, want the run's nil", err, took)
				}
				return
			}
			if !errors.Is(err, errUndelivered) || exitcode.Of(err) != exitcode.Interrupted || !strings.Contains(err.Error(), "took nothing for 300ms") {
				t.Fatalf("err %v (exit %d), want the output undelivered after the grace (300ms), exit 130", err, exitcode.Of(err))
			}
			if took < streamGrace {
				t.Fatalf("gave up after %s, before the grace of %s", took, streamGrace)
			}
		})
	}
}

// TestDeliverCountsSignals: deliver counts the signals (interrupt.Counter)
// instead of dropping "the first one's copy" for up to 100 ms. Two
// signals back to back are both counted: the second ends the wait at
// once, where a channel of one signal, still holding the first one's
// copy, dropped it. A stop that was no signal (a deadline) drops nothing,
// so the next signal ends the wait (said "a signal", not "a second
// signal"); a second signal that came before deliver began (a report
// written after the run) does not end it. One signal only leaves the
// wait to the grace. The grace is an hour where a signal must end the
// wait (a miscount hangs: hangGuard), 300 ms where the grace must.
func TestDeliverCountsSignals(t *testing.T) {
	defer func(g time.Duration) { streamGrace = g }(streamGrace)
	tests := []struct {
		name     string
		before   int  // signals before deliver begins (a report written after the run)
		deadline bool // a deadline, not a signal, stops the run
		during   int  // signals back to back once the run began, before its write blocks
		want     string
	}{
		{name: "two signals back to back", during: 2, want: "stopped by a second signal before it was all written"},
		{name: "one signal", during: 1, want: "took nothing for 300ms"},
		{name: "stopped before deliver began, then one signal", before: 1, during: 1, want: "stopped by a second signal before"},
		{name: "two signals before deliver began", before: 2, want: "took nothing for 300ms"},
		{name: "a deadline, then one signal", deadline: true, during: 1, want: "stopped by a signal before it was all written"},
		{name: "a deadline, no signal", deadline: true, want: "took nothing for 300ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			streamGrace = time.Hour
			if strings.Contains(tt.want, "took nothing") {
				streamGrace = 300 * time.Millisecond
			}
			block := make(chan struct{})
			defer close(block)
			parent, sigs := stoppedParent(t, tt.before, tt.deadline)
			err := deliverGuarded(t, parent, "-", slowWriter{block: block}, func(dst output) error {
				for range tt.during {
					sigs.Receive(syscall.SIGINT)
				}
				_, err := dst.stdout.Write(make([]byte, 64<<10))
				return err
			})
			if !errors.Is(err, errUndelivered) || exitcode.Of(err) != exitcode.Interrupted || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v (exit %d), want exit 130 saying %q", err, exitcode.Of(err), tt.want)
			}
		})
	}
}

// TestStalledStdoutStopsOnSecondSignal: "capture -o - | sleep 600" (or
// fetch, export, plan-retries; or -o /dev/stdout) blocks writing once the
// pipe is full. SIGINT stops the run but its output cannot be written; a
// second SIGINT exits at once with 130 and one line saying the output was
// not delivered. It used to ignore both signals.
func TestStalledStdoutStopsOnSecondSignal(t *testing.T) {
	bin := infohashBinary(t)
	hashes, data := stalledInputs(t, "stall")
	tests := []struct {
		name string
		args []string
		load bool   // send get_peers/announce_peer queries to the node
		also string // another line stderr must hold
	}{
		{name: "capture", load: true,
			args: []string{"capture", "--passive", "--bootstrap", "", "--dht-listen", "127.0.0.1:0", "--duration", "1m", "-o", "-"}},
		{name: "fetch",
			args: []string{"fetch", "--no-dht", "--peer", "127.0.0.1:1", "--concurrency", "50", hashes, "-o", "-"},
			also: "the leased jobs whose rows did not get through stay leased until their lease ends"},
		{name: "export", args: []string{"export", "--data", data, "--table", "state", "--format", "csv", "-o", "-"}},
		{name: "export -o /dev/stdout", args: []string{"export", "--data", data, "--table", "state", "--format", "csv", "-o", "/dev/stdout"}},
		{name: "plan-retries", args: []string{"plan-retries", "--data", data, "--limit", "20000", "-o", "-"},
			also: "the jobs could not all be delivered: 20000 jobs stay leased until"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close() // held open and never read
			cmd, stderr, exited := startCmd(t, bin, w, tt.args...)
			w.Close()
			if tt.load {
				loadCapture(t, stderr)
			}
			waitFor(t, "the pipe to fill", func() bool {
				n, err := unix.IoctlGetInt(int(r.Fd()), unix.TIOCINQ) // FIONREAD: bytes in the pipe
				return err == nil && n >= 32<<10
			})
			cmd.Process.Signal(syscall.SIGINT)
			waitStopSeen(t, stderr)
			cmd.Process.Signal(syscall.SIGINT)
			wantExit130(t, exited, stderr, "SIGINT")
			if n := strings.Count(stderr.String(), "the output could not be delivered"); n != 1 {
				t.Fatalf("%d lines say the output was not delivered, want 1; stderr:\n%s", n, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.also) {
				t.Fatalf("stderr does not say %q:\n%s", tt.also, stderr.String())
			}
		})
	}
}

// stalledInputs writes a list of 5000 hashes and makes a dataset of 20000
// new hashes (more jobs and more CSV than a pipe holds), both from seed.
func stalledInputs(t *testing.T, seed string) (hashes, data string) {
	t.Helper()
	hashes = filepath.Join(t.TempDir(), "hashes.txt")
	if err := os.WriteFile(hashes, []byte(hexLines(seed, 5000)), 0o644); err != nil {
		t.Fatal(err)
	}
	data = filepath.Join(t.TempDir(), "ds")
	many := filepath.Join(t.TempDir(), "many.txt")
	if err := os.WriteFile(many, []byte(hexLines(seed+"-ds", 20000)), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, nil, "dedup", "--data", data, many)
	return hashes, data
}

// startCmd starts bin with args, its stdout on stdout (nil: none) and its
// stderr in the buffer returned; exited gets what cmd.Wait returns. The
// process is killed when the test ends.
func startCmd(t *testing.T, bin string, stdout io.Writer, args ...string) (*exec.Cmd, *lockedBuffer, <-chan error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stderr := &lockedBuffer{}
	if stdout != nil {
		cmd.Stdout = stdout
	}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, stderr, exited
}

// loadCapture waits for the address capture logs on stderr and sends it
// 20000 get_peers/announce_peer queries.
func loadCapture(t *testing.T, stderr *lockedBuffer) {
	t.Helper()
	var port string
	waitFor(t, "capture's address", func() bool {
		m := regexp.MustCompile(`addr=127\.0\.0\.1:(\d+)`).FindStringSubmatch(stderr.String())
		if m != nil {
			port = m[1]
		}
		return m != nil
	})
	if _, err := loadgen.Run(t.Context(), loadgen.Config{Target: "127.0.0.1:" + port, Rate: 20000, Count: 20000, Senders: 1}); err != nil {
		t.Fatal(err)
	}
}

// waitStopSeen waits for the line a command prints once the first signal
// has stopped its run and its output is found blocked ("... (interrupt
// again to stop now)"): the signal has been received and counted, so one
// sent now is a second signal, however loaded the machine (two sent too
// close together may reach the process as one, as any two pending
// signals of a kind do).
func waitStopSeen(t *testing.T, stderr *lockedBuffer) {
	t.Helper()
	waitFor(t, "the line saying the next signal stops it", func() bool {
		return strings.Contains(stderr.String(), "(interrupt again to stop now)")
	})
}

// wantExit130 fails the test unless the command exited reports on exits
// with 130, saying that the second signal (sig names it) stopped it. The
// product's promise is that a second signal ends the run at once; the
// line says it did, rather than the end of the grace (streamGrace after
// the first signal), so how soon it came is not timed: a wait of 8 s was
// a window a loaded machine could outlast. hangGuard bounds a hang.
func wantExit130(t *testing.T, exited <-chan error, stderr *lockedBuffer, sig string) {
	t.Helper()
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Fatalf("exit %v, want 130; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(hangGuard):
		t.Fatalf("still running %s after the second %s; stderr:\n%s", hangGuard, sig, stderr.String())
	}
	if !strings.Contains(stderr.String(), "stopped by a second signal") {
		t.Fatalf("stderr does not say the second %s stopped it; stderr:\n%s", sig, stderr.String())
	}
}

// stoppedParent is the context a signal-counting test hands deliver or the
// stream grace: an interrupt.Counter's (cancelled with the test), given
// before signals, and past a deadline already if deadline (a stop that
// was no signal). The Counter takes the signals the test sends next.
func stoppedParent(t *testing.T, before int, deadline bool) (context.Context, *interrupt.Counter) {
	t.Helper()
	ctx, sigs, cancel := interrupt.New(t.Context())
	t.Cleanup(cancel)
	for range before {
		sigs.Receive(syscall.SIGINT)
	}
	if deadline {
		var stop context.CancelFunc
		ctx, stop = context.WithDeadline(ctx, time.Now()) // passed already
		t.Cleanup(stop)
	}
	return ctx, sigs
}
