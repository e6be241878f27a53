package dataset

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/formats/schema"
)

// stageNext stages a change to two tables (a state partition, and the
// ledger through an applied input) on d's current snapshot.
func stageNext(t *testing.T, d *Dataset, b byte) *Tx {
	t.Helper()
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	info, err := WriteStaged(tx, TableState, "01", []schema.State{{InfoHash: schema.Hash{1, b}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
	if err != nil {
		t.Fatal(err)
	}
	tx.SetPartition(TableState, "01", []FileInfo{info})
	tx.AddApplied(Applied{ID: string(rune('a' + b)), Name: "input", Rows: 1, At: time.Unix(0, 0).UTC()})
	return tx
}

// leftAbove lists what d holds numbered above snapshot snap (manifests,
// table directories) and what is left in staging/.
func leftAbove(t *testing.T, d *Dataset, snap int64) []string {
	t.Helper()
	var left []string
	for _, n := range d.above(snap) {
		left = append(left, n.rel)
	}
	staged, _ := os.ReadDir(d.Path("staging"))
	for _, e := range staged {
		left = append(left, filepath.Join("staging", e.Name()))
	}
	return left
}

// currentName is the manifest CURRENT names.
func currentName(t *testing.T, d *Dataset) string {
	t.Helper()
	name, _, err := readPointer(d.Path("CURRENT"))
	if err != nil {
		t.Fatal(err)
	}
	return name
}

// TestFailedCommitLeavesNoSnapshot: a commit that fails after it has
// built its snapshot directories, before CURRENT names them, removes
// them and the manifest if it wrote one: left, they held a whole
// snapshot that the retry on a full disk needed. The error is the one
// that failed the commit, and the retry commits.
func TestFailedCommitLeavesNoSnapshot(t *testing.T) {
	eio := &os.PathError{Op: "fsync", Path: "injected", Err: syscall.EIO}
	for _, tt := range []struct {
		name  string
		spoil func(t *testing.T)
	}{
		{"syncfs fails", func(t *testing.T) {
			syncFS = func(string) error { return eio }
			t.Cleanup(func() { syncFS = fsutil.SyncFS })
		}},
		{"the manifest's write fails", func(t *testing.T) {
			writeFile = func(p string, b []byte) error {
				if filepath.Base(p) == manifestName(2) {
					return eio
				}
				return fsutil.WriteFile(p, b)
			}
			t.Cleanup(func() { writeFile = fsutil.WriteFile })
		}},
		{"the manifest is written, then its folder's fsync fails", func(t *testing.T) {
			writeFile = func(p string, b []byte) error {
				if err := fsutil.WriteFile(p, b); err != nil || filepath.Base(p) != manifestName(2) {
					return err
				}
				return eio
			}
			t.Cleanup(func() { writeFile = fsutil.WriteFile })
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := openNew(t)
			commitRows(t, d, "00", []schema.State{{InfoHash: schema.Hash{0, 1}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
			tx := stageNext(t, d, 1)
			tt.spoil(t)
			if _, err := tx.Commit(context.Background(), CommitOptions{Writer: "test"}); !errors.Is(err, syscall.EIO) {
				t.Fatalf("commit: %v, want the injected error", err)
			}
			if got := currentName(t, d); got != manifestName(1) {
				t.Fatalf("CURRENT names %s", got)
			}
			if left := leftAbove(t, d, 1); len(left) > 0 {
				t.Fatalf("the failed commit left %v", left)
			}
			syncFS, writeFile = fsutil.SyncFS, fsutil.WriteFile
			m, err := stageNext(t, d, 1).Commit(context.Background(), CommitOptions{Writer: "test"})
			if err != nil || m.Snapshot != 2 {
				t.Fatalf("retry: %v", err)
			}
			if n := globRows(t, d); n != 2 {
				t.Fatalf("glob sees %d rows, want 2", n)
			}
		})
	}
}

// TestErrorPastTheCommitPointKeepsTheSnapshot: an error after CURRENT
// names the new snapshot (here: its state link cannot be replaced) must
// not remove what CURRENT names.
func TestErrorPastTheCommitPointKeepsTheSnapshot(t *testing.T) {
	d := openNew(t)
	commitRows(t, d, "00", []schema.State{{InfoHash: schema.Hash{0, 1}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
	link := d.Path("state", "current")
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(link, "in-the-way"), 0o755); err != nil {
		t.Fatal(err)
	}
	stageNext(t, d, 1).Commit(context.Background(), CommitOptions{Writer: "test"})
	if got := currentName(t, d); got != manifestName(2) {
		t.Fatalf("CURRENT names %s, want snapshot 2's", got)
	}
	m, err := d.Current()
	if err != nil {
		t.Fatal(err)
	}
	if v := verifyAll(t, d, m); len(v) > 0 {
		t.Fatalf("the published snapshot lost files: %v", v)
	}
}

// TestMaintainRemovesUnpublished: a writer's Open removes the manifests
// and snapshot directories numbered above CURRENT's snapshot, and the
// stale temporary files of manifests, under the lock and only then;
// Unpublished lists them for a reader, with the bytes they alone hold.
func TestMaintainRemovesUnpublished(t *testing.T) {
	d := openNew(t)
	commitRows(t, d, "00", []schema.State{{InfoHash: schema.Hash{0, 1}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
	keep := leftAbove(t, d, -1)
	write := func(rel string, size int) string {
		t.Helper()
		p := d.Path(rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("manifests/000000000002.json", 10)
	write("manifests/000000000005.json", 20)
	write("state/v/000000000002/prefix=01/part-a.parquet", 300)
	write("ledger/v/000000000003/part-b.parquet", 4000)
	write("state/v/notes/readme", 1) // not a snapshot's: left alone
	// A file kept from snapshot 1 is a hard link: it frees nothing.
	m1, err := d.Current()
	if err != nil {
		t.Fatal(err)
	}
	f := m1.Tables[TableState].Partitions["00"][0]
	if err := os.MkdirAll(d.Path("state/v/000000000002/prefix=00"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(d.FilePath(m1.Tables[TableState], "00", f), d.Path("state/v/000000000002/prefix=00", f.Name)); err != nil {
		t.Fatal(err)
	}
	tmp := write("manifests/"+fsutil.TempPrefix+"000000000002.json-0a0b", 5)
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(tmp, old, old); err != nil {
		t.Fatal(err)
	}
	want := []string{"manifests/000000000002.json", "manifests/000000000005.json", "state/v/000000000002", "ledger/v/000000000003"}
	u := d.Unpublished(m1)
	for i := range u.Paths {
		u.Paths[i], _ = filepath.Rel(d.Dir, u.Paths[i])
	}
	if !slices.Equal(u.Paths, want) || u.Bytes != 10+20+300+4000 {
		t.Fatalf("Unpublished: %v, %d bytes; want %v, 4330 bytes", u.Paths, u.Bytes, want)
	}

	l, err := acquireLock(context.Background(), d.Dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), d.Dir, OpenOptions{}); err != nil {
		t.Fatal(err)
	}
	if left := leftAbove(t, d, 1); len(left) != len(want) {
		t.Fatalf("Open removed leftovers while another held the lock: %v left", left)
	}
	l.Release()
	if _, err := Open(context.Background(), d.Dir, OpenOptions{}); err != nil {
		t.Fatal(err)
	}
	if left := leftAbove(t, d, 1); len(left) > 0 {
		t.Fatalf("Open left %v", left)
	}
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a killed manifest write's temporary file stays: %v", err)
	}
	if !slices.Equal(leftAbove(t, d, -1), keep) {
		t.Fatalf("Open removed more than the leftovers: %v, had %v", leftAbove(t, d, -1), keep)
	}
	if _, err := os.Stat(d.Path("state/v/notes/readme")); err != nil {
		t.Fatal(err)
	}
	if m, err := d.Current(); err != nil || len(verifyAll(t, d, m)) > 0 {
		t.Fatalf("snapshot 1 damaged: %v", err)
	}
}

// envKillAt makes TestKilledCommitHelper commit in the dataset it names
// and kill itself once the manifest is written, before CURRENT is.
const envKillAt = "INFOHASH_TEST_KILL_COMMIT"

func TestKilledCommitHelper(t *testing.T) {
	dir := os.Getenv(envKillAt)
	if dir == "" {
		t.Skip("run by TestKilledCommitLeavesNothingInTheWay")
	}
	d, err := Open(context.Background(), dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tx := stageNext(t, d, 7)
	writeFile = func(p string, b []byte) error {
		err := fsutil.WriteFile(p, b)
		if strings.HasSuffix(p, ".json") {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
		return err
	}
	tx.Commit(context.Background(), CommitOptions{Writer: "killed"})
	t.Fatal("not killed")
}

// TestKilledCommitLeavesNothingInTheWay: a writer killed (-9) after it
// built snapshot 2 and wrote its manifest, before CURRENT named it,
// leaves them. The next writer commits over them even when it cannot
// maintain the dataset first (another held the lock as it opened it),
// and a writer that opens it with the lock free removes them first.
func TestKilledCommitLeavesNothingInTheWay(t *testing.T) {
	for _, maintained := range []bool{false, true} {
		name := "not maintained"
		if maintained {
			name = "maintained"
		}
		t.Run(name, func(t *testing.T) {
			d := openNew(t)
			commitRows(t, d, "00", []schema.State{{InfoHash: schema.Hash{0, 1}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
			cmd := exec.Command(os.Args[0], "-test.run=^TestKilledCommitHelper$", "-test.count=1")
			cmd.Env = append(os.Environ(), envKillAt+"="+d.Dir)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("helper: %v\n%s", err, out)
			}
			left := leftAbove(t, d, 1)
			if !slices.Contains(left, "manifests/000000000002.json") || !slices.Contains(left, "state/v/000000000002") ||
				!slices.Contains(left, "ledger/v/000000000002") || currentName(t, d) != manifestName(1) {
				t.Fatalf("setup: the killed commit left %v, CURRENT %s", left, currentName(t, d))
			}
			var l *Lock
			if !maintained {
				if l, err = acquireLock(context.Background(), d.Dir, 0); err != nil {
					t.Fatal(err)
				}
			}
			d2, err := Open(context.Background(), d.Dir, OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			l.Release()
			if maintained {
				if left := leftAbove(t, d, 1); slices.ContainsFunc(left, func(s string) bool { return !strings.HasPrefix(s, "staging") }) {
					t.Fatalf("Open left %v", left)
				}
			}
			// The next commit touches the state alone: the killed one's
			// ledger directory must not survive it either.
			commitRows(t, d2, "02", []schema.State{{InfoHash: schema.Hash{2, 1}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
			m, err := d2.Current()
			if err != nil || m.Snapshot != 2 || m.LedgerLen() != 0 {
				t.Fatalf("next commit: %v, %+v", err, m)
			}
			if v := verifyAll(t, d2, m); len(v) > 0 {
				t.Fatal(v)
			}
			if n := globRows(t, d2); n != 2 {
				t.Fatalf("glob sees %d rows, want 2", n)
			}
			if _, err := os.Stat(d.Path("ledger", "v", "000000000002")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the killed commit's ledger directory stays: %v", err)
			}
		})
	}
}
