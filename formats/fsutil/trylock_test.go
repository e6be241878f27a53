package fsutil

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestTryLockDir: the first taker holds the lock and says who it is; a
// second is refused with ErrHeld quoting the holder until the first
// releases; a file in the directory's place is an error.
func TestTryLockDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	release, err := TryLockDir(dir, "lock")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "lock"))
	if want := "pid " + strconv.Itoa(os.Getpid()); strings.TrimSpace(string(b)) != want {
		t.Errorf("lock file holds %q, want %q", b, want)
	}
	// flock locks belong to the open file description: a second open in
	// this process conflicts as another process's would.
	var held *HeldError
	if _, err := TryLockDir(dir, "lock"); !errors.Is(err, ErrHeld) || !errors.As(err, &held) || held.Holder != "pid "+strconv.Itoa(os.Getpid()) {
		t.Fatalf("second lock: %v, want ErrHeld naming the holder", err)
	}
	release()
	again, err := TryLockDir(dir, "lock")
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	again()
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o644)
	if _, err := TryLockDir(file, "lock"); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("lock in a file: %v", err)
	}
}

func TestHeldErrorText(t *testing.T) {
	for _, c := range []struct{ holder, want string }{
		{"pid 7", "d/lock: held by another process (pid 7)"},
		{"", "d/lock: held by another process, which has written no name into it"},
	} {
		if got := (&HeldError{Path: "d/lock", Holder: c.holder}).Error(); got != c.want {
			t.Errorf("holder %q: %q, want %q", c.holder, got, c.want)
		}
	}
}

// TestTryLockDirOverwritesLongerHolder: the line written over a longer
// one left by the last holder leaves none of its bytes behind.
func TestTryLockDirOverwritesLongerHolder(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "lock")
	if err := os.WriteFile(p, []byte("pid 123456789012345\nsomething more\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	release, err := TryLockDir(dir, "lock")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	b, err := os.ReadFile(p)
	if want := "pid " + strconv.Itoa(os.Getpid()) + "\n"; err != nil || string(b) != want {
		t.Fatalf("lock file holds %q (%v), want %q", b, err, want)
	}
}
