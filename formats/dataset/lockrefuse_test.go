package dataset

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRefusalNamesHolderThatNamesItselfLate: a writer that may not wait
// (no --lock-wait) and finds the lock held while the LOCK file names no
// one (the holder took the flock and has not written its line yet, as
// between two writers) looks again before it gives up: its exit-75 error
// named "another process" for a holder about to name itself. A holder
// that never names itself (flock(1)) is still refused, and said to have
// written no name; one named at once is named without a second look.
func TestRefusalNamesHolderThatNamesItselfLate(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skipf("no flock(1): %v", err)
	}
	const line = "host=h pid=7 since=2026-12-07T00:00:00Z"
	tests := []struct {
		name   string
		early  bool   // the holder writes its line as it takes the lock
		late   bool   // else when the refusal first finds LOCK empty
		want   string // what the error says holds the lock
		looked bool   // the refusal found LOCK empty (lockUnnamed ran)
	}{
		{"named at once", true, false, "(held by " + line + ")", false},
		{"named late", false, true, "(held by " + line + ")", true},
		{"never named", false, false, "(held by another process, which has written no name into LOCK)", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "LOCK")
			name := lateHolder(t, path, line, tt.early)
			looked := false
			lockUnnamed = func(p string) {
				looked = true
				if tt.late {
					name()
				}
			}
			defer func() { lockUnnamed = nil }()
			_, err := acquireLock(context.Background(), dir, 0)
			if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("acquireLock: %v; want ErrLocked %s", err, tt.want)
			}
			if looked != tt.looked {
				t.Fatalf("the refusal found LOCK empty: %v, want %v", looked, tt.looked)
			}
		})
	}
}

// TestTryLockDoesNotLookAgain: the tries at once whose refusal no one
// reads (tryLock: Open's maintenance, removeUnused) do not look again at
// a LOCK file that names no one, unlike a refusal: every writer opening
// a dataset while flock(1) held it paid the 0.5 s in Open's maintenance.
func TestTryLockDoesNotLookAgain(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skipf("no flock(1): %v", err)
	}
	dir := t.TempDir()
	lateHolder(t, filepath.Join(dir, "LOCK"), "unused", false)
	looked := false
	lockUnnamed = func(string) { looked = true }
	defer func() { lockUnnamed = nil }()
	if _, err := tryLock(dir); !errors.Is(err, ErrLocked) || looked {
		t.Fatalf("tryLock: %v, looked again %v; want ErrLocked at once", err, looked)
	}
}

// lateHolder makes flock(1) take the lock file at path, empty, and
// returns once it holds it; name makes it write holder into the file
// (unless early: it did as it took the lock) and returns once it has.
// The holder lets go at the test's end.
func lateHolder(t *testing.T, path, holder string, early bool) (name func()) {
	t.Helper()
	script := `echo held; read a; printf '%s\n' "$HOLDER" >"$LOCK"; echo named; read b`
	if early {
		script = `printf '%s\n' "$HOLDER" >"$LOCK"; echo held; read b`
	}
	cmd := exec.Command("flock", path, "-c", script)
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
	t.Cleanup(func() {
		in.Close() // read ends: the shell, then flock, exit
		cmd.Wait()
	})
	lines := make(chan string, 2)
	go func() {
		r := bufio.NewReader(out)
		for {
			l, err := r.ReadString('\n')
			if err != nil {
				close(lines)
				return
			}
			lines <- l
		}
	}()
	expect := func(want string) {
		t.Helper()
		select {
		case l := <-lines:
			if l != want+"\n" {
				t.Fatalf("flock(1) said %q, want %s", l, want)
			}
		case <-time.After(time.Minute):
			t.Fatalf("flock(1) did not say %s within a minute", want)
		}
	}
	expect("held")
	return func() {
		io.WriteString(in, "\n")
		expect("named")
	}
}
