package dataset

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// holdByProcess makes flock(1), another process, take the lock file at
// path and write holder in it, and returns once it holds it; release
// ends that process (the lock goes with it) and waits for it to end. It
// is released at the test's end if not before.
func holdByProcess(t *testing.T, path, holder string) (release func()) {
	t.Helper()
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skipf("no flock(1): %v", err)
	}
	cmd := exec.Command("flock", path, "-c", `printf '%s\n' "$HOLDER" >"$LOCK"; echo held; read line`)
	cmd.Env = append(os.Environ(), "HOLDER="+holder, "LOCK="+path)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := false
	release = func() {
		if !done {
			done = true
			in.Close() // read ends: the shell, then flock, exit
			cmd.Wait()
		}
	}
	t.Cleanup(release)
	held := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		held <- line
	}()
	select {
	case line := <-held:
		if line != "held\n" {
			t.Fatalf("flock(1) said %q, want held", line)
		}
	case <-time.After(time.Minute):
		t.Fatal("flock(1) did not take the lock within a minute")
	}
	return release
}

// TestLockWaitBoundsTheRun: --lock-wait D bounds all of a run's waits for
// the lock, not each: a writer whose first commit waited most of D for
// a lock another process held, then lost the race (the base moved), may
// wait only what is left of D at its next commit, and is locked out
// there. Each acquisition waited up to D, so a run could wait about 3 x
// D in all (two commits, then a try held under the lock).
func TestLockWaitBoundsTheRun(t *testing.T) {
	logs := &records{}
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(logs))
	const wait = time.Second
	defer func(was time.Duration) { lockWaitLogEvery = was }(lockWaitLogEvery)
	lockWaitLogEvery = wait * 6 / 10 // a wait that lasts 60% of D says so
	d := openNew(t)
	lock := filepath.Join(d.Dir, "LOCK")
	var release func()
	// The holder lets go once a wait has lasted 60% of D: the first
	// commit takes the lock then, with 40% of D left for the rest.
	logs.then = func(line string) {
		if strings.HasPrefix(line, "dataset: still waiting for the writer lock ") && release != nil {
			release()
			release = nil
		}
	}
	const holder = "host=elsewhere pid=1 since=2026-12-07T00:00:00Z"
	tries := 0
	_, _, err := Tries{Stage: "test", LockWait: wait}.Run(context.Background(), d, func(tx *Tx, attempt int) (bool, error) {
		tries++
		if attempt >= HoldLockAfter {
			return true, nil // a try held under the lock commits
		}
		// Another writer moves the base, then another process holds
		// the lock through this try's commit.
		if err := commitKey(d, fmt.Sprintf("%02x", 0x80+attempt), 0); err != nil {
			t.Fatalf("the other writer: %v", err)
		}
		release = holdByProcess(t, lock, holder)
		return true, nil
	})
	if !errors.Is(err, ErrLocked) || tries != 2 {
		t.Fatalf("Run: %v after %d tries; want ErrLocked at the second (logged %q)", err, tries, logs.take())
	}
	lines := logs.take()
	var second string // the second commit's wait
	for _, l := range lines {
		if strings.HasPrefix(l, "dataset: waiting for the writer lock ") {
			second = l
		}
	}
	if !strings.Contains(second, " held_by="+holder+" ") || !strings.Contains(second, " lock_wait_total=1s") ||
		strings.Contains(second, " lock_wait=1s") {
		t.Fatalf("the second wait logged %q; want what is left of lock_wait_total=1s, in %q", second, lines)
	}
}
