package app

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestLockedNamesCommand: every command that takes the dataset's writer
// lock says which command was locked out, on the line that exits 75
// (dedup and merge said only "dataset: DIR: dataset locked…", while
// policy set named itself).
func TestLockedNamesCommand(t *testing.T) {
	dir, data := seedDataset(t)
	_, other := seedDataset(t)
	holdLock(t, data)
	list := filepath.Join(dir, "list.txt")
	if err := os.WriteFile(list, []byte("1111111111111111111111111111111111111111\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"dedup", []string{"dedup", "--data", data, list}},
		{"plan-retries", []string{"plan-retries", "--data", data, "-o", filepath.Join(dir, "jobs.parquet")}},
		{"merge", []string{"merge", "--data", data, "--from", other}},
		{"policy set", []string{"policy", "set", "--data", data, "jitter=0.1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runMain(t, tc.args...)
			if code != 75 || !strings.HasPrefix(stderr, "infohash: "+tc.name+": ") || !strings.Contains(stderr, "locked") {
				t.Errorf("exit %d, stderr %q; want 75 and a line starting %q", code, stderr, "infohash: "+tc.name+": ")
			}
			// "dataset" once: not "dataset: DIR: dataset locked by another writer".
			if n := strings.Count(strings.ReplaceAll(stderr, data, "DIR"), "dataset"); n != 1 {
				t.Errorf("stderr %q says \"dataset\" %d times, want once", stderr, n)
			}
		})
	}
}

// TestLockedSaysLockWait: the line of a run locked out of the dataset
// says what to do: without --lock-wait, that it can wait for the lock;
// with it, that the lock was still held when the wait ran out (the line
// was the same in both cases, and named no remedy).
func TestLockedSaysLockWait(t *testing.T) {
	dir, data := seedDataset(t)
	holdLock(t, data)
	list := filepath.Join(dir, "list.txt")
	if err := os.WriteFile(list, []byte("1111111111111111111111111111111111111111\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"dedup":                  {[]string{"dedup", "--data", data, list}, "; retry later, or wait for it with --lock-wait D"},
		"dedup --lock-wait":      {[]string{"dedup", "--data", data, "--lock-wait", "100ms", list}, "; still held when --lock-wait 100ms ran out"},
		"policy set":             {[]string{"policy", "set", "--data", data, "jitter=0.1"}, "; retry later, or wait for it with --lock-wait D"},
		"policy set --lock-wait": {[]string{"policy", "set", "--data", data, "--lock-wait=100ms", "jitter=0.1"}, "; still held when --lock-wait 100ms ran out"},
	} {
		t.Run(name, func(t *testing.T) {
			_, stderr, code := runMain(t, tc.args...)
			if code != 75 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 75 and %q", code, stderr, tc.want)
			}
		})
	}
}

// holdLock takes the writer lock of the dataset at data (DIR/LOCK, made if
// missing) as a committing writer holds it, until the test ends or the
// caller closes or unlocks the returned file.
func holdLock(t *testing.T, data string) *os.File {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(data, "LOCK"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	return f
}
