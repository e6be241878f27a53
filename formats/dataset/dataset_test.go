package dataset

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/schema/schematest"
)

func openNew(t *testing.T) *Dataset {
	t.Helper()
	d, err := Open(context.Background(), t.TempDir(), OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func commitRows(t *testing.T, d *Dataset, key string, rows []schema.State) *Manifest {
	t.Helper()
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	info, err := WriteStaged(tx, TableState, key, rows)
	if err != nil {
		t.Fatal(err)
	}
	tx.SetPartition(TableState, key, []FileInfo{info})
	m, err := tx.Commit(context.Background(), CommitOptions{Writer: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func globRows(t *testing.T, d *Dataset) int {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(d.Dir, "state", "current", "prefix=*", "*.parquet"))
	n := 0
	for _, f := range files {
		rows, err := ReadFile[schema.State](f)
		if err != nil {
			t.Fatal(err)
		}
		n += len(rows)
	}
	return n
}

func TestCommitPublishesThroughGlob(t *testing.T) {
	d := openNew(t)
	commitRows(t, d, "00", []schema.State{{InfoHash: schema.Hash{0, 1}, HashType: 1, MetadataStatus: "new", Tier: "hot"}, {InfoHash: schema.Hash{0, 2}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
	m := commitRows(t, d, "01", []schema.State{{InfoHash: schema.Hash{1, 1}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
	if m.Snapshot != 2 || m.Table(TableState).Rows() != 3 {
		t.Fatalf("snapshot %d rows %d", m.Snapshot, m.Table(TableState).Rows())
	}
	if n := globRows(t, d); n != 3 {
		t.Fatalf("glob sees %d rows, want 3", n)
	}
	// Replacing a partition: the glob shows only the new file.
	commitRows(t, d, "00", []schema.State{{InfoHash: schema.Hash{0, 9}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
	if n := globRows(t, d); n != 2 {
		t.Fatalf("glob sees %d rows after replace, want 2", n)
	}
	ents, _ := os.ReadDir(filepath.Join(d.Dir, "staging"))
	if len(ents) != 0 {
		t.Fatalf("staging left: %v", ents)
	}
}

func TestConflictAndLock(t *testing.T) {
	d := openNew(t)
	tx1, _ := d.Begin()
	commitRows(t, d, "00", []schema.State{{InfoHash: schema.Hash{}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
	info, _ := WriteStaged(tx1, TableState, "02", []schema.State{{InfoHash: schema.Hash{2}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
	tx1.SetPartition(TableState, "02", []FileInfo{info})
	if _, err := tx1.Commit(context.Background(), CommitOptions{}); !errors.Is(err, ErrConflict) {
		t.Fatalf("stale base commit: err = %v, want ErrConflict", err)
	}
	l, err := acquireLock(context.Background(), d.Dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	tx2, _ := d.Begin()
	if _, err := tx2.Commit(context.Background(), CommitOptions{}); !errors.Is(err, ErrLocked) {
		t.Fatalf("locked commit: err = %v, want ErrLocked", err)
	}
	l.Release()
}

// TestKeepAndGC: a commit keeps the last 3 snapshots (the default
// --keep), and removes older ones only after it has released the lock.
func TestKeepAndGC(t *testing.T) {
	d := openNew(t)
	gcs, locked := 0, 0
	gcStarts = func() {
		gcs++
		l, err := acquireLock(context.Background(), d.Dir, 0)
		if err != nil {
			locked++
			return
		}
		l.Release()
	}
	defer func() { gcStarts = nil }()
	for i := 0; i < 6; i++ {
		commitRows(t, d, "00", []schema.State{{InfoHash: schema.Hash{0, byte(i)}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
	}
	if gcs != 6 || locked != 0 {
		t.Errorf("%d of %d collections ran under the writer lock", locked, gcs)
	}
	vs, _ := os.ReadDir(filepath.Join(d.Dir, "state", "v"))
	if len(vs) != 3 {
		t.Fatalf("kept %d snapshot dirs, want 3", len(vs))
	}
	ms, _ := os.ReadDir(filepath.Join(d.Dir, "manifests"))
	if len(ms) != 3 {
		t.Fatalf("kept %d manifests, want 3", len(ms))
	}
}

// TestMaintainUnderAStaleView: a writer that read CURRENT just before
// another committed, and then maintains the dataset, must not point the
// table links back at its stale snapshot (with --keep 1 that snapshot's
// directory is already gone): maintenance follows CURRENT as it is under
// the lock.
func TestMaintainUnderAStaleView(t *testing.T) {
	d := openNew(t)
	commitRows(t, d, "00", []schema.State{{InfoHash: schema.Hash{}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
	stale, err := d.Current()
	if err != nil {
		t.Fatal(err)
	}
	m := commitRows(t, d, "01", []schema.State{{InfoHash: schema.Hash{1}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
	// What Open does after reading CURRENT: its version check, then
	// maintenance, here with another commit in between.
	if stale.Snapshot != 1 || stale.FormatVersion != FormatVersion {
		t.Fatalf("setup: snapshot %d, format %d", stale.Snapshot, stale.FormatVersion)
	}
	d.maintain()
	link := filepath.Join(d.Dir, "state", "current")
	if got, _ := os.Readlink(link); got != "v/"+filepath.Base(m.Tables[TableState].Dir) {
		t.Fatalf("state/current -> %s, want snapshot %d's directory", got, m.Snapshot)
	}
	if n := globRows(t, d); n != 2 {
		t.Fatalf("glob sees %d rows, want 2", n)
	}
}

func TestRollForwardAfterCrashBeforeLink(t *testing.T) {
	d := openNew(t)
	commitRows(t, d, "00", []schema.State{{InfoHash: schema.Hash{}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
	m := commitRows(t, d, "01", []schema.State{{InfoHash: schema.Hash{1}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
	// Simulate a crash between CURRENT and the symlink: point it back.
	link := filepath.Join(d.Dir, "state", "current")
	os.Remove(link)
	os.Symlink("v/000000000001", link)
	if n := globRows(t, d); n != 1 {
		t.Fatalf("setup: %d rows", n)
	}
	if _, err := Open(context.Background(), d.Dir, OpenOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.Readlink(link); got != "v/"+filepath.Base(m.Tables[TableState].Dir) {
		t.Fatalf("link not rolled forward: %s", got)
	}
	if n := globRows(t, d); n != 2 {
		t.Fatalf("after roll forward: %d rows", n)
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := Open(context.Background(), t.TempDir(), OpenOptions{}); !errors.Is(err, ErrNotDataset) {
		t.Fatalf("err = %v", err)
	}
	d := openNew(t)
	os.WriteFile(filepath.Join(d.Dir, "CURRENT"), []byte("../../etc/passwd\n"), 0o644)
	if _, err := Open(context.Background(), d.Dir, OpenOptions{}); err == nil {
		t.Fatal("corrupt CURRENT accepted")
	}
}

func TestMigrateFromV1(t *testing.T) {
	dir := t.TempDir()
	pdir := filepath.Join(dir, "state", "v", "000000000001", "prefix=ab")
	os.MkdirAll(pdir, 0o755)
	os.MkdirAll(filepath.Join(dir, "manifests"), 0o755)
	rows := []schematest.StateV1{{InfoHash: schema.Hash{0xab, 1}, HashType: 1, SeenCount: 7, MetadataStatus: "failed", Attempts: 3, NextRetry: 5, Tier: "hot"}}
	if err := parquet.WriteFile(filepath.Join(pdir, "old.parquet"), rows); err != nil {
		t.Fatal(err)
	}
	m := &Manifest{FormatVersion: 1, Snapshot: 1, Tables: map[string]*Table{TableState: {Dir: "state/v/000000000001",
		Partitions: map[string][]FileInfo{"ab": {{Name: "old.parquet", Rows: 1}}}}}}
	writeManifest(filepath.Join(dir, "manifests", manifestName(1)), m)
	os.WriteFile(filepath.Join(dir, "CURRENT"), []byte(manifestName(1)), 0o644)

	d, err := Open(context.Background(), dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur, _ := d.Current()
	if cur.FormatVersion != FormatVersion || cur.Snapshot != 2 {
		t.Fatalf("after migrate: version %d snapshot %d", cur.FormatVersion, cur.Snapshot)
	}
	st := cur.Table(TableState)
	got, err := ReadPartition[schema.State](d, st, "ab")
	if err != nil || len(got) != 1 || got[0].SeenCount != 7 || got[0].Attempts != 3 || got[0].NextRetry != 5 {
		t.Fatalf("migrated rows %+v, %v", got, err)
	}
	f, _ := os.Open(d.FilePath(st, "ab", st.Partitions["ab"][0]))
	defer f.Close()
	fi, _ := f.Stat()
	pf, err := parquet.OpenFile(f, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := pf.Schema().Lookup("backoff_step"); !ok {
		t.Fatal("migrated file lacks backoff_step")
	}
	if n := globRows(t, d); n != 1 {
		t.Fatalf("glob after migrate: %d", n)
	}
}

func TestReapply(t *testing.T) {
	conflict := fmt.Errorf("commit: %w", ErrConflict)
	other := errors.New("disk full")
	tests := []struct {
		name    string
		err     error
		attempt int
		retry   bool
		locked  bool
	}{
		{"committed", nil, 0, false, false},
		{"conflict early", conflict, 0, true, false},
		{"conflict last", conflict, MaxReapply - 1, true, false},
		{"conflict too often", conflict, MaxReapply, false, true},
		{"other error", other, 0, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			retry, err := Reapply(tt.err, tt.attempt)
			if retry != tt.retry || errors.Is(err, ErrLocked) != tt.locked {
				t.Fatalf("Reapply = %v, %v", retry, err)
			}
			if !retry && !tt.locked && err != tt.err {
				t.Fatalf("error changed: %v", err)
			}
		})
	}
}

// TestStageErrorNamesTheFileOnce: a failed write already names the staged
// file (os.PathError); a failed read of the source (SourceError) names only
// the source; other errors get the staged file added.
func TestStageErrorNamesTheFileOnce(t *testing.T) {
	const p = "/d/staging/1-x/state/00_part-a.parquet"
	for name, c := range map[string]struct {
		err  error
		want string
	}{
		"write failed": {&os.PathError{Op: "write", Path: p, Err: errors.New("no space left on device")},
			"dataset: write " + p + ": no space left on device"},
		"another file": {&os.PathError{Op: "open", Path: "/d/other", Err: errors.New("gone")},
			"dataset: " + p + ": open /d/other: gone"},
		"encoder": {errors.New("bad row"), "dataset: " + p + ": bad row"},
		"reading the source": {&SourceError{Path: "/d/state/v/1/prefix=00/part-b.parquet", Err: errors.New("crc32 checksum mismatch")},
			"/d/state/v/1/prefix=00/part-b.parquet: crc32 checksum mismatch"},
	} {
		t.Run(name, func(t *testing.T) {
			got := stageError(p, c.err)
			if got.Error() != c.want || !errors.Is(got, c.err) {
				t.Errorf("stageError = %q, want %q wrapping the cause", got, c.want)
			}
		})
	}
}

// TestReadManifestCache: a manifest read again is a copy the caller may
// change, and a file replaced under the same name (a re-published
// snapshot number) or rewritten in place is read as it is now. (The name
// is from a per-process cache, since removed; the test guards against
// one coming back wrong.)
func TestReadManifestCache(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "000000000001.json")
	write := func(m *Manifest) {
		t.Helper()
		if err := writeManifest(p, m); err != nil {
			t.Fatal(err)
		}
	}
	// Format 3: the ledger in the manifest, and no table but state needed.
	base := &Manifest{FormatVersion: 3, Snapshot: 1, Tables: map[string]*Table{
		TableState: {Dir: "state/v/000000000001", Partitions: map[string][]FileInfo{"00": {{Name: "a.parquet", Rows: 3}}}}},
		Applied: []Applied{{ID: "x", Name: "in.parquet", Rows: 3}}}
	write(base)
	m1, err := readManifest(p)
	if err != nil {
		t.Fatal(err)
	}
	m1.Applied[0].ID = "changed by a caller"
	m1.Tables[TableState].Partitions["00"][0].Rows = 99
	m2, err := readManifest(p)
	if err != nil {
		t.Fatal(err)
	}
	if m2.Applied[0].ID != "x" || m2.Tables[TableState].Partitions["00"][0].Rows != 3 {
		t.Fatalf("a second read shows a caller's changes to the first: %+v", m2)
	}
	// Replaced by rename, as writeManifest does: a new inode.
	next := base.clone()
	next.Applied = append(next.Applied, Applied{ID: "y", Name: "more.parquet", Rows: 1})
	write(next)
	m3, err := readManifest(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(m3.Applied) != 2 || m3.Applied[1].ID != "y" {
		t.Fatal("a manifest replaced under the same name was not read again")
	}
	// Rewritten in place (same inode, other size).
	b, _ := os.ReadFile(p)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte(strings.Replace(string(b), `"more.parquet"`, `"more-renamed.parquet"`, 1)))
	f.Close()
	m4, err := readManifest(p)
	if err != nil {
		t.Fatal(err)
	}
	if m4.Applied[1].Name != "more-renamed.parquet" {
		t.Fatalf("a manifest rewritten in place was not read again: %+v", m4.Applied)
	}
}

func TestCursorsMoveOnlyWithTheirCommit(t *testing.T) {
	d := openNew(t)
	tx, _ := d.Begin()
	tx.SetCursor(CursorColdSweep, 16)
	if _, err := tx.Commit(context.Background(), CommitOptions{Writer: "test"}); err != nil {
		t.Fatal(err)
	}
	// A commit that does not set it carries it over.
	commitRows(t, d, "00", []schema.State{{InfoHash: schema.Hash{}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
	// A transaction that loses the race (or is aborted) moves nothing.
	lost, _ := d.Begin()
	lost.SetCursor(CursorColdSweep, 32)
	commitRows(t, d, "01", []schema.State{{InfoHash: schema.Hash{1}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
	if _, err := lost.Commit(context.Background(), CommitOptions{}); !errors.Is(err, ErrConflict) {
		t.Fatalf("stale commit: err = %v, want ErrConflict", err)
	}
	aborted, _ := d.Begin()
	aborted.SetCursor(CursorColdSweep, 48)
	aborted.Abort()
	d2, err := Open(context.Background(), d.Dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := d2.Current()
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Cursor(CursorColdSweep); got != 16 || m.Snapshot != 3 {
		t.Fatalf("snapshot %d: cold sweep cursor %d, want 16 carried over from snapshot 1", m.Snapshot, got)
	}
	if m.Cursor("other") != 0 {
		t.Errorf("an unset cursor reads %d, want 0", m.Cursor("other"))
	}
}
