package app

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// lockedBuffer collects a child's stderr for polling.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitFor polls cond until it holds or a minute passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// startPiped starts the binary with a pipe on its stdin and its stderr
// collected; the process is killed at the end of the test if still
// running.
func startPiped(t *testing.T, bin string, args ...string) (*exec.Cmd, io.WriteCloser, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, stdin, stderr
}

// hexLines returns n hex infohashes, one per line, from seed.
func hexLines(seed string, n int) string {
	var sb strings.Builder
	for i := range n {
		h := sha1.Sum(fmt.Appendf(nil, "%s-%d", seed, i))
		sb.WriteString(hex.EncodeToString(h[:]) + "\n")
	}
	return sb.String()
}

// TestInterruptAppliesWhatTheStreamStillSends: Ctrl-C in "capture -o - |
// dedup -" reaches both; dedup goes on reading until the writer closes
// the pipe and commits it all (exit 130), where it used to stop at once
// with nothing committed. A second signal stops it at once.
func TestInterruptAppliesWhatTheStreamStillSends(t *testing.T) {
	bin := infohashBinary(t)
	for _, second := range []bool{false, true} {
		t.Run(fmt.Sprintf("second signal %v", second), func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ds")
			cmd, stdin, stderr := startPiped(t, bin, "dedup", "--data", data, "-")
			io.WriteString(stdin, hexLines("a", 100))
			// The spool exists once dedup is reading (its handlers are set
			// up before any input is opened).
			waitFor(t, "the stdin spool", func() bool {
				m, _ := filepath.Glob(filepath.Join(data, "inbox", "*"))
				return len(m) > 0
			})
			cmd.Process.Signal(syscall.SIGINT)
			waitFor(t, "the grace warning", func() bool { return strings.Contains(stderr.String(), "applying what the stream still sends") })
			if second {
				cmd.Process.Signal(syscall.SIGINT)
			} else {
				io.WriteString(stdin, hexLines("b", 100))
				stdin.Close()
			}
			err := cmd.Wait()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
				t.Fatalf("exit %v, want 130; stderr:\n%s", err, stderr.String())
			}
			if second {
				// The line names the real inbox, and what the next run
				// does with the spool (sets it aside; it is not applied).
				if want := "nothing committed (what stdin had sent is kept in " + filepath.Join(data, "inbox") + ": the next run sets it aside"; !strings.Contains(stderr.String(), want) {
					t.Fatalf("stderr lacks %q:\n%s", want, stderr.String())
				}
				return
			}
			if !strings.Contains(stderr.String(), "what the stream sent was applied") {
				t.Fatalf("stderr:\n%s", stderr.String())
			}
			out, err := exec.Command(bin, "export", "--data", data, "--format", "csv", "-o", "-").Output()
			if err != nil {
				t.Fatal(err)
			}
			if rows := strings.Count(string(out), "\n") - 1; rows != 200 {
				t.Fatalf("state holds %d hashes, want 200", rows)
			}
		})
	}
}

// noPeersStream seeds data with 20 hashes and returns them, the time of a
// fetch attempt of each and an Arrow stream of their results: no_peers
// at that time.
func noPeersStream(t *testing.T, data string) (hs []string, at time.Time, stream []byte) {
	t.Helper()
	hs = seedHashes(t, data, 20, 1)
	at = time.Date(2026, 3, 1, 1, 0, 0, 0, time.UTC)
	rs := make([]schema.Result, len(hs))
	for i, hx := range hs {
		h, _, _, err := schema.ParseHex(hx)
		if err != nil {
			t.Fatal(err)
		}
		rs[i] = schema.Result{InfoHash: h, HashType: schema.HashV1, AttemptedAt: at.UnixMilli(),
			Outcome: schema.OutcomeNoPeers, PeerFailures: []schema.PeerFailure{}}
	}
	return hs, at, resultsArrow(t, rs)
}

// TestInterruptMergeAppliesTheRestOfTheStream: the same grace for
// "fetch -o - | merge --data DIR -": the results still arriving after
// Ctrl-C are applied and committed (exit 130).
func TestInterruptMergeAppliesTheRestOfTheStream(t *testing.T) {
	bin := infohashBinary(t)
	data := filepath.Join(t.TempDir(), "ih")
	hs, at, stream := noPeersStream(t, data)
	prom := filepath.Join(t.TempDir(), "merge.prom")
	cmd, stdin, stderr := startPiped(t, bin, "merge", "--data", data, "--far-now", "--now", at.Add(time.Minute).Format(time.RFC3339),
		"--metrics-file", prom, "-")
	stdin.Write(stream[:len(stream)/2])
	waitFor(t, "merge's stdin spool", func() bool {
		m, _ := filepath.Glob(filepath.Join(data, "inbox", "merge", "*"))
		return len(m) > 0
	})
	cmd.Process.Signal(syscall.SIGINT)
	waitFor(t, "the grace warning", func() bool { return strings.Contains(stderr.String(), "applying what the stream still sends") })
	stdin.Write(stream[len(stream)/2:])
	stdin.Close()
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 || !strings.Contains(stderr.String(), "what the stream sent was applied") {
		t.Fatalf("exit %v, want 130 saying it was applied; stderr:\n%s", err, stderr.String())
	}
	if n := strings.Count(stateCSV(t, data), ",no_peers,"); n != len(hs) {
		t.Fatalf("%d hashes failed no_peers in the state, want %d", n, len(hs))
	}
	// The metrics say how it ended: no success to time.
	if b, err := os.ReadFile(prom); err != nil || !strings.Contains(string(b), "\ninfohash_merge_exit_status 130\n") ||
		strings.Contains(string(b), "last_success_timestamp_seconds") {
		t.Errorf("--metrics-file (err %v):\n%s\nwant exit_status 130 and no last_success", err, b)
	}
}

// TestGraceCountsSignals: the stream grace counts signals as deliver
// does (TestDeliverCountsSignals): two back to back end the grace at once
// (the second was dropped while the first one's copy filled the channel),
// as one after a stop that was no signal does (it waited 100 ms for a
// copy that never came, and dropped a signal in them); one signal, or a
// second one that came before the grace began, leaves the end to the
// grace: at least streamGrace (300 ms) after it began. Where a signal must
// end it, the grace is an hour and a miscount hangs (hangGuard).
func TestGraceCountsSignals(t *testing.T) {
	defer func(g time.Duration) { streamGrace = g }(streamGrace)
	tests := []struct {
		name     string
		before   int  // signals before the grace begins
		deadline bool // a deadline, not a signal, cancels parent
		during   int  // signals back to back once the grace began
		bySignal bool // a signal ends the grace, not its time
	}{
		{name: "two signals back to back", during: 2, bySignal: true},
		{name: "one signal", during: 1},
		{name: "stopped before the grace began, then one signal", before: 1, during: 1, bySignal: true},
		{name: "two signals before the grace began", before: 2},
		{name: "a deadline, then one signal", deadline: true, during: 1, bySignal: true},
		{name: "a deadline, no signal", deadline: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			streamGrace = 300 * time.Millisecond
			if tt.bySignal {
				streamGrace = time.Hour
			}
			parent, sigs := stoppedParent(t, tt.before, tt.deadline)
			start := time.Now()
			g := withStreamGrace(parent, "test", []string{"-"})
			defer g.done()
			for range tt.during {
				sigs.Receive(syscall.SIGINT)
			}
			select {
			case <-g.ctx.Done():
			case <-time.After(hangGuard):
				t.Fatalf("the grace has not ended %s after it began (%d signals)", hangGuard, sigs.Count())
			}
			if took := time.Since(start); !tt.bySignal && took < streamGrace {
				t.Fatalf("the grace ended after %s, before its %s: a signal ended it", took, streamGrace)
			}
			if !g.interrupted() {
				t.Fatal("interrupted() is false after parent was cancelled")
			}
		})
	}
}

// TestGraceInterruptedSettlesAtDone: interrupted says whether parent was
// cancelled before done, and no longer changes once done has returned.
// When parent's cancellation and done came together, the grace goroutine
// could pick parent after done and set it a moment later (a run that
// ended before the signal then exited 130), or not yet have set it when
// the run read it (one interrupted before it ended exited 0). "Later" is
// once the goroutine has returned, not after a 2 ms sleep.
func TestGraceInterruptedSettlesAtDone(t *testing.T) {
	tests := []struct {
		name         string
		cancelBefore bool // cancel parent before done, else just after
	}{
		{"signal before done", true},
		{"signal after done", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i := range 200 {
				parent, cancel := context.WithCancel(context.Background())
				t.Cleanup(cancel)
				g := withStreamGrace(parent, "test", []string{"-"})
				if tt.cancelBefore {
					cancel()
				}
				g.done()
				if !tt.cancelBefore {
					cancel()
				}
				first := g.interrupted()
				select { // the goroutine has run: it can set nothing more
				case <-g.watched:
				case <-time.After(time.Minute):
					t.Fatalf("round %d: the grace goroutine has not returned a minute after done", i)
				}
				if last := g.interrupted(); first != tt.cancelBefore || last != first {
					t.Fatalf("round %d: interrupted() = %v right after done, %v later; want %v", i, first, last, tt.cancelBefore)
				}
			}
		})
	}
}
