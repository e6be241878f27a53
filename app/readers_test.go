package app

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/infohash/infohash/formats/fsutil/fsutiltest"
)

// toFormat3 rewrites data's latest manifest as format 3 wrote it: the
// ledger inline in the manifest rather than a table (state files are the
// same since format 3). It is what an older binary left for a newer one.
func toFormat3(t *testing.T, data string) {
	t.Helper()
	name, err := os.ReadFile(filepath.Join(data, "CURRENT"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(data, "manifests", strings.TrimSpace(string(name)))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["format_version"] = 3
	delete(m["tables"].(map[string]any), "ledger")
	m["applied"] = []map[string]any{{"id": "sha-old", "name": "old.txt", "rows": 2, "at": "2026-02-01T00:00:00Z"}}
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func sameTree(t *testing.T, before, after map[string]string) {
	t.Helper()
	for p, s := range after {
		if before[p] != s {
			t.Errorf("%s: %q, was %q", p, s, before[p])
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("%s removed", p)
		}
	}
}

// readerRuns are the commands that only read a dataset (of an older
// format: plan-retries --limit 0 without -o writes a current one).
func readerRuns(data string) [][]string {
	return [][]string{
		{"plan-retries", "--data", data, "--limit", "0"},
		{"status", "--data", data},
		{"status", "--data", data, "--verify"},
		{"status", "--data", data, "--format", "json"},
		{"export", "--data", data, "--table", "state", "--format", "csv", "-o", "-"},
		{"export", "--data", data, "--table", "catalog", "--format", "jsonl", "-o", "-"},
		{"export", "--data", data, "--table", "ledger", "--format", "csv", "-o", "-"},
	}
}

// TestReadersWriteNothing: status, export and a dry run of plan-retries
// read a format-3 dataset as it is, while a writer holds its lock, and
// change nothing under DIR (no migration, no LOCK, no staging/); the dry
// run says so. merge --from reads the other dataset the same way.
func TestReadersWriteNothing(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ih")
	seedHashes(t, data, 20, 5)
	toFormat3(t, data)
	lock, err := os.OpenFile(filepath.Join(data, "LOCK"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	before := fsutiltest.Tree(t, data)
	for _, args := range readerRuns(data) {
		stdout, stderr, code := runMain(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
		if args[0] == "status" && args[len(args)-1] == data && !strings.Contains(stdout, "20 (0 leased to fetch jobs, 1 input applied)") {
			t.Errorf("status of the format-3 dataset:\n%s", stdout)
		}
		const dry = "dataset format 3: read as it is (a dry run migrates nothing); the next dedup, plan-retries or merge migrates it"
		if args[0] == "plan-retries" && !strings.Contains(stderr, dry) {
			t.Errorf("the dry run does not say %q:\n%s", dry, stderr)
		}
		if args[0] == "export" && args[4] == "ledger" && !strings.Contains(stdout, "sha-old") {
			t.Errorf("ledger export lacks the inline entry:\n%s", stdout)
		}
	}
	other := filepath.Join(t.TempDir(), "other")
	if _, stderr, code := runMain(t, "merge", "--data", other, "--from", data); code != 0 {
		t.Fatalf("merge --from: exit %d: %s", code, stderr)
	}
	sameTree(t, before, fsutiltest.Tree(t, data))
}

// TestReadersOnAReadOnlyCopy: on a dataset no one may write to, status
// and export work (where chmod binds: not as root).
func TestReadersOnAReadOnlyCopy(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes through chmod a-w; TestReadersWriteNothing checks that nothing is written")
	}
	data := filepath.Join(t.TempDir(), "ih")
	seedHashes(t, data, 20, 6)
	toFormat3(t, data)
	var dirs []string
	filepath.WalkDir(data, func(p string, e fs.DirEntry, err error) error {
		if err == nil && e.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for _, d := range dirs {
		os.Chmod(d, 0o555)
	}
	t.Cleanup(func() {
		for _, d := range dirs {
			os.Chmod(d, 0o755)
		}
	})
	for _, args := range readerRuns(data) {
		if _, stderr, code := runMain(t, args...); code != 0 {
			t.Errorf("%s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
	}
}
