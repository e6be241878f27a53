package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/infohash/infohash/internal/exitcode"
)

// mkfifo makes a FIFO alone in a new directory (so that a temporary file
// left beside it shows).
func mkfifo(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "out")
	if err := unix.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return p
}

// stalledPipe is the capacity of the pipes of openStalledReader: small,
// so that even capture's well-compressed Parquet file overflows it.
const stalledPipe = 4096

// openStalledReader opens fifo for reading and never reads: a writer's
// open then succeeds, and its writes block once the pipe (of
// stalledPipe bytes) is full.
func openStalledReader(t *testing.T, fifo string) *os.File {
	t.Helper()
	r, err := os.OpenFile(fifo, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	if _, err := unix.FcntlInt(r.Fd(), unix.F_SETPIPE_SZ, stalledPipe); err != nil {
		t.Fatal(err)
	}
	return r
}

// pipeHolds reports whether at least n bytes wait in the pipe r reads.
func pipeHolds(r *os.File, n int) bool {
	got, err := unix.IoctlGetInt(int(r.Fd()), unix.TIOCINQ) // FIONREAD
	return err == nil && got >= n
}

// openingFIFO reports whether a thread of process pid waits in open(2)
// for a FIFO's other end.
func openingFIFO(pid int) bool {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/wchan")
	for _, p := range tasks {
		if b, err := os.ReadFile(p); err == nil && string(b) == "wait_for_partner" {
			return true
		}
	}
	return false
}

// TestDeliverGraceFIFO: with -o naming a FIFO, deliver watches the open
// and the writes as it does stdout's: after the stop, an open that no
// reader answers, or a write that a reader does not take, gives up after
// streamGrace with exit 130 and says which: not before the grace, and
// because of it (the error says so); how soon after is not timed
// (hangGuard only).
func TestDeliverGraceFIFO(t *testing.T) {
	defer func(g time.Duration) { streamGrace = g }(streamGrace)
	streamGrace = 300 * time.Millisecond
	for _, tt := range []struct {
		name   string
		reader bool // a reader opens the FIFO and reads nothing
		want   string
	}{
		{name: "no reader", want: "for 300ms (nothing was written to it)"},
		{name: "reader takes nothing", reader: true, want: "'s reader took nothing for 300ms"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fifo := mkfifo(t)
			if tt.reader {
				openStalledReader(t, fifo)
			} else {
				// Unblocks the abandoned open at the end of the test.
				defer func() {
					if r, err := os.OpenFile(fifo, os.O_RDONLY|unix.O_NONBLOCK, 0); err == nil {
						time.Sleep(50 * time.Millisecond)
						r.Close()
					}
				}()
			}
			ctx, cancel := context.WithCancel(t.Context())
			start := time.Now()
			err := deliverGuarded(t, ctx, fifo, nil, func(dst output) error {
				cancel()
				f, err := dst.open(fifo)
				if err != nil {
					return err
				}
				defer f.Abort()
				for {
					if _, err := f.Write(make([]byte, 64<<10)); err != nil {
						return err
					}
				}
			})
			took := time.Since(start)
			if !errors.Is(err, errUndelivered) || exitcode.Of(err) != exitcode.Interrupted || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v (exit %d), want the output undelivered (%q), exit 130", err, exitcode.Of(err), tt.want)
			}
			if took < streamGrace {
				t.Fatalf("gave up after %s, before the grace of %s", took, streamGrace)
			}
		})
	}
}

// TestStalledFIFOStopsOnSecondSignal: -o FIFO is a stream like -o -.
// Whether no reader opens the FIFO (the command blocks in open(2)) or its
// reader takes nothing (it blocks in write(2)), SIGTERM and a second
// SIGTERM end the command with exit 130 and one line; plan-retries still
// says what stays leased. The FIFO stays a FIFO, with no temporary file
// beside it. Both used to ignore the signals for good.
func TestStalledFIFOStopsOnSecondSignal(t *testing.T) {
	bin := infohashBinary(t)
	hashes, data := stalledInputs(t, "fifo")
	tests := []struct {
		name     string
		args     []string
		load     bool // capture: send it queries, which it writes at the stop
		stalled  string
		noReader string // another line stderr must hold
	}{
		{name: "capture", load: true,
			args: []string{"capture", "--passive", "--bootstrap", "", "--dht-listen", "127.0.0.1:0", "--duration", "1m"}},
		{name: "fetch", args: []string{"fetch", "--no-dht", "--peer", "127.0.0.1:1", "--concurrency", "50", hashes},
			stalled:  "the leased jobs whose rows did not get through stay leased until their lease ends",
			noReader: "the leased jobs whose rows did not get through stay leased until their lease ends"},
		{name: "export", args: []string{"export", "--data", data, "--table", "state", "--format", "csv"}},
		// No reader first: plan-retries waits for one before it leases.
		{name: "plan-retries", args: []string{"plan-retries", "--data", data, "--limit", "20000"},
			stalled: "the jobs could not all be delivered: 20000 jobs stay leased until"},
	}
	for _, tt := range tests {
		for _, reader := range []string{"no reader", "stalled reader"} {
			t.Run(tt.name+"/"+reader, func(t *testing.T) {
				fifo := mkfifo(t)
				var r *os.File
				if reader == "stalled reader" {
					r = openStalledReader(t, fifo)
				}
				cmd, stderr, exited := startCmd(t, bin, nil, append(tt.args, "-o", fifo)...)
				if r == nil {
					waitFor(t, "the command to open the FIFO", func() bool { return openingFIFO(cmd.Process.Pid) })
				} else if tt.load {
					loadCapture(t, stderr)
				} else {
					waitFor(t, "the FIFO to fill", func() bool { return pipeHolds(r, stalledPipe) })
				}
				cmd.Process.Signal(syscall.SIGTERM)
				if r != nil {
					// capture writes its Parquet file at the stop.
					waitFor(t, "the FIFO to fill", func() bool { return pipeHolds(r, stalledPipe) })
				}
				waitStopSeen(t, stderr)
				cmd.Process.Signal(syscall.SIGTERM)
				wantExit130(t, exited, stderr, "SIGTERM")
				if n := strings.Count(stderr.String(), "the output could not be delivered"); n != 1 {
					t.Fatalf("%d lines say the output was not delivered, want 1; stderr:\n%s", n, stderr.String())
				}
				also := map[bool]string{true: tt.noReader, false: tt.stalled}[r == nil]
				if !strings.Contains(stderr.String(), also) {
					t.Fatalf("stderr does not say %q:\n%s", also, stderr.String())
				}
				if r == nil && strings.Contains(stderr.String(), "stay leased until 2") {
					t.Fatalf("leases taken with no reader for the jobs:\n%s", stderr.String())
				}
				if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
					t.Fatalf("the FIFO was replaced: %v", err)
				}
				if names, _ := os.ReadDir(filepath.Dir(fifo)); len(names) != 1 {
					t.Fatalf("beside the FIFO: %v", names)
				}
			})
		}
	}
}
