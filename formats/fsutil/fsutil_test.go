package fsutil

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestWriteFileReplacesAtomically: WriteFile and ReplaceFile (which
// leaves the directory's fsync to its caller) replace the file whole and
// leave no temporary file.
func TestWriteFileReplacesAtomically(t *testing.T) {
	for name, write := range map[string]func(string, []byte) error{"WriteFile": WriteFile, "ReplaceFile": ReplaceFile} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "x.json")
			for _, content := range []string{"one", "two"} {
				if err := write(p, []byte(content)); err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(p)
				if err != nil || string(got) != content {
					t.Fatalf("read %q, %v; want %q", got, err, content)
				}
			}
			ents, _ := os.ReadDir(dir)
			if len(ents) != 1 {
				t.Fatalf("leftover files: %v", ents)
			}
		})
	}
}

// TestWriteFileIfAbsent: the first writer makes the file, a later one
// leaves it as it is, and neither leaves a temporary file behind.
func TestWriteFileIfAbsent(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "policy.json")
	for i, tt := range []struct {
		data        string
		wantCreated bool
	}{{"first", true}, {"second", false}} {
		created, err := WriteFileIfAbsent(p, []byte(tt.data))
		if err != nil || created != tt.wantCreated {
			t.Fatalf("write %d: created %v, %v; want %v", i, created, err, tt.wantCreated)
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != "first" {
			t.Fatalf("write %d: read %q, %v; want %q", i, got, err, "first")
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("leftover files: %v", ents)
	}
}

func TestAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(filepath.Join(dir, "y"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(f.Name()), TempPrefix) {
		t.Fatalf("temp name %s", f.Name())
	}
	f.Write([]byte("partial"))
	f.Abort()
	f.Abort()
	if err := f.Commit(); err == nil {
		t.Fatal("commit after abort succeeded")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 0 {
		t.Fatalf("leftover files: %v", ents)
	}
}

// TestCreateLocked: the temporary file is locked from the moment it has a
// name (marked so) where O_TMPFILE works, just after elsewhere, and
// commits like Create's.
func TestCreateLocked(t *testing.T) {
	for _, unnamed := range []bool{true, false} {
		t.Run(map[bool]string{true: "unnamed first", false: "fallback"}[unnamed], func(t *testing.T) {
			defer func(was bool) { unnamedFirst = was }(unnamedFirst)
			unnamedFirst = unnamed
			dir := t.TempDir()
			want := false
			if unnamed {
				probe, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
				if err != nil {
					t.Skipf("no O_TMPFILE here: %v", err)
				}
				unix.Close(probe)
				want = true
			}
			testCreateLocked(t, dir, want)
		})
	}
}

func testCreateLocked(t *testing.T, dir string, lockedAtBirth bool) {
	final := filepath.Join(dir, "spool.arrow")
	f, lk, err := CreateLocked(final)
	if err != nil {
		t.Fatal(err)
	}
	if LockedAtBirth(f.Name()) != lockedAtBirth {
		t.Fatalf("%s: LockedAtBirth %v, want %v", f.Name(), !lockedAtBirth, lockedAtBirth)
	}
	other, err := os.Open(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(other.Fd()), unix.LOCK_EX|unix.LOCK_NB); !errors.Is(err, unix.EWOULDBLOCK) {
		t.Fatalf("another handle took the lock: %v", err)
	}
	if _, err := f.Write([]byte("data")); err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	lk.Close()
	if err := unix.Flock(int(other.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatalf("the lock outlived its handle: %v", err)
	}
	other.Close()
	if b, err := os.ReadFile(final); err != nil || string(b) != "data" {
		t.Fatalf("committed %q, %v", b, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("left %d files, want the committed one", len(ents))
	}
}

func TestLockedAtBirth(t *testing.T) {
	for _, c := range []struct {
		name string
		want bool
	}{
		{TempPrefix + "part-0a1b.arrow-L00ff00ff00ff", true},
		{"/inbox/" + TempPrefix + "part-0a1b.txt-L1", true},
		{TempPrefix + "part-0a1b.arrow-123456789", false}, // os.CreateTemp's
		{"part-0a1b.arrow-L00", false},
		{TempPrefix + "part-L1.arrow-99", false},
	} {
		if got := LockedAtBirth(c.name); got != c.want {
			t.Errorf("LockedAtBirth(%q) = %v", c.name, got)
		}
	}
}

// TestBlockedSince: a write to a FIFO whose reader takes nothing shows as
// blocked since it began, and no longer once the reader takes the data;
// a file written under a temporary name never shows.
func TestBlockedSince(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	r, err := os.OpenFile(fifo, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := CreateOutput(fifo)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	if !f.BlockedSince().IsZero() {
		t.Fatal("blocked before any write")
	}
	data := make([]byte, 4*inPlaceChunk) // more than a pipe holds
	start := time.Now()
	wrote := make(chan error, 1)
	go func() {
		_, err := f.Write(data)
		wrote <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for since := f.BlockedSince(); since.IsZero() || time.Since(since) < 100*time.Millisecond; since = f.BlockedSince() {
		if time.Now().After(deadline) {
			t.Fatal("the stalled write never showed as blocked")
		}
		if !since.IsZero() && since.Before(start) {
			t.Fatalf("blocked since %v, before the write began at %v", since, start)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := io.Copy(io.Discard, io.LimitReader(nonBlocking{r}, int64(len(data)))); err != nil {
		t.Fatal(err)
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if !f.BlockedSince().IsZero() {
		t.Fatal("still blocked after the write returned")
	}

	g, err := CreateOutput(filepath.Join(dir, "file"))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Abort()
	if _, err := g.Write(data); err != nil || !g.BlockedSince().IsZero() {
		t.Fatalf("a regular file: %v, blocked since %v", err, g.BlockedSince())
	}
}

// nonBlocking reads a non-blocking descriptor, waiting out EAGAIN.
type nonBlocking struct{ f *os.File }

func (n nonBlocking) Read(p []byte) (int, error) {
	for {
		m, err := n.f.Read(p)
		if !errors.Is(err, unix.EAGAIN) {
			return m, err
		}
		time.Sleep(time.Millisecond)
	}
}

// TestCommitKeepingKeepsOnFailedRename: when the rename into place fails
// or is refused (a non-empty directory holds the final name: refused as
// NotRegularError, where the rename would fail with EEXIST), Commit
// removes the temporary file, as an ordinary output wants, and
// CommitKeeping leaves it, closed and whole, under the temporary name it
// returns.
func TestCommitKeepingKeepsOnFailedRename(t *testing.T) {
	for _, tt := range []struct {
		name   string
		commit func(*File) (string, error)
		keep   bool
	}{
		{"Commit", func(f *File) (string, error) { return "", f.Commit() }, false},
		{"CommitKeeping", (*File).CommitKeeping, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			final := filepath.Join(dir, "out")
			if err := os.MkdirAll(filepath.Join(final, "in-the-way"), 0o755); err != nil {
				t.Fatal(err)
			}
			f, err := Create(final)
			if err != nil {
				t.Fatal(err)
			}
			tmp := f.Name()
			f.Write([]byte("read once"))
			kept, err := tt.commit(f)
			if nr := new(NotRegularError); !errors.As(err, &nr) || nr.Kind != "a directory" {
				t.Fatalf("commit: %v, want the rename refused: a directory holds the name", err)
			}
			b, rerr := os.ReadFile(tmp)
			switch {
			case !tt.keep && (kept != "" || !errors.Is(rerr, os.ErrNotExist)):
				t.Fatalf("kept %q; the temporary file: %q, %v; want it removed", kept, b, rerr)
			case tt.keep && (kept != tmp || rerr != nil || string(b) != "read once"):
				t.Fatalf("kept %q (temporary %s): %q, %v; want it whole", kept, tmp, b, rerr)
			}
			if _, err := f.File.Write([]byte("x")); !errors.Is(err, os.ErrClosed) {
				t.Fatalf("the file is still open: write: %v", err)
			}
		})
	}
}
