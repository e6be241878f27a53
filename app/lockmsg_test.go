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
	lock, err := os.OpenFile(filepath.Join(data, "LOCK"), os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
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
