package fsutiltest

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// NullDevice returns the path of a character device that discards what
// is written to it, for a test that writes an output to a device. As
// root it is a node made in a temporary folder (mknod c 1 3), never
// /dev/null itself: root can create files in /dev, so a writer that
// renames a temporary file onto its output would replace /dev/null for
// every process on the machine. Without the right to make a node it is
// /dev/null, which such a process cannot replace (it cannot create the
// temporary file in /dev); if it could, the test is skipped.
func NullDevice(t testing.TB) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "null")
	if err := unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err == nil {
		return p
	}
	if unix.Access(filepath.Dir(os.DevNull), unix.W_OK) == nil {
		t.Skip("cannot make a device node here, and /dev/null could be replaced")
	}
	return os.DevNull
}

// Output is one kind of thing an output path can name, made by Outputs.
type Output struct {
	Name string // what Path names: "device", "FIFO", "link to a file"...
	Path string
	// Fails: a writer must refuse Path (a directory; a file in a folder
	// it cannot write in), leaving it as it was.
	Fails bool
	// Direct: written in place (a device or FIFO, or a link to one).
	Direct bool

	dir    string
	target string    // the file or device a link points at
	fifo   *fifoRead // what a FIFO's reader has read
}

// Outputs makes, each in a folder of its own and named name there, the
// kinds of path an output can be named that a writer must respect: a character device (where
// this process may make one: root) and a FIFO, written in place; a symbolic link to a regular file, whose target
// is written; a link to a device (as a device); a directory, refused; and, when the
// permission bits bind this process (not root), a file in a read-only
// folder, refused. A FIFO has a reader from the start, which takes what
// is written (FIFOBytes). Check says whether each is still what it was.
func Outputs(t testing.TB, name string) []Output {
	t.Helper()
	var outs []Output
	add := func(kind string, fails, direct bool, make func(dir, p string) string) {
		dir := t.TempDir()
		p := filepath.Join(dir, name)
		target := make(dir, p)
		outs = append(outs, Output{Name: kind, Path: p, Fails: fails, Direct: direct, dir: dir, target: target})
	}
	mknod := func(p string) {
		if err := unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
			t.Fatal(err)
		}
	}
	devices := unix.Mknod(filepath.Join(t.TempDir(), "null"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))) == nil
	if devices {
		add("device", false, true, func(_, p string) string { mknod(p); return "" })
	}
	add("FIFO", false, true, func(_, p string) string {
		if err := unix.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
		return ""
	})
	add("link to a file", false, false, func(dir, p string) string {
		if err := os.WriteFile(filepath.Join(dir, "file"), []byte("old\n"), 0o640); err != nil {
			t.Fatal(err)
		}
		symlink(t, "file", p)
		return "file"
	})
	if devices {
		add("link to a device", false, true, func(dir, p string) string {
			mknod(filepath.Join(dir, "dev"))
			symlink(t, "dev", p)
			return "dev"
		})
	}
	add("directory", true, false, func(_, p string) string {
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return ""
	})
	if os.Geteuid() != 0 {
		add("file in a read-only folder", true, false, func(dir, p string) string {
			if err := os.WriteFile(p, []byte("old\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, 0o555); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(dir, 0o755) })
			return ""
		})
	}
	for i := range outs {
		if outs[i].Name == "FIFO" {
			outs[i].fifo = readFIFO(t, outs[i].Path)
		}
	}
	return outs
}

func symlink(t testing.TB, to, p string) {
	t.Helper()
	if err := os.Symlink(to, p); err != nil {
		t.Fatal(err)
	}
}

// Check fails t unless o is still what Outputs made it (Changed).
func (o Output) Check(t testing.TB) {
	t.Helper()
	if err := o.Changed(); err != nil {
		t.Fatal(err)
	}
}

// Changed says how o's path is no longer what Outputs made it (the same
// device, FIFO, link to the same target, directory or file), or its
// folder holds something else (a temporary file left); nil if it is as
// it was. A link to a file must still lead to a regular file; a
// directory must still be empty.
func (o Output) Changed() error {
	fi, err := os.Lstat(o.Path)
	if err != nil {
		return fmt.Errorf("%s: %w", o.Name, err)
	}
	want := map[string]fs.FileMode{"device": fs.ModeDevice | fs.ModeCharDevice, "FIFO": fs.ModeNamedPipe,
		"link to a file": fs.ModeSymlink, "link to a device": fs.ModeSymlink, "directory": fs.ModeDir}[o.Name]
	if got := fi.Mode().Type(); got != want {
		return fmt.Errorf("%s %s is now %s: replaced", o.Name, o.Path, typeName(got))
	}
	names := []string{filepath.Base(o.Path)}
	if o.target != "" {
		names = append(names, o.target)
		if to, err := os.Readlink(o.Path); err != nil || to != o.target {
			return fmt.Errorf("%s %s now leads to %q (%v), not %q", o.Name, o.Path, to, err, o.target)
		}
		tf, err := os.Lstat(filepath.Join(o.dir, o.target))
		if err != nil {
			return fmt.Errorf("%s: its target: %w", o.Name, err)
		}
		if o.Direct && tf.Mode().Type() != fs.ModeDevice|fs.ModeCharDevice || !o.Direct && !tf.Mode().IsRegular() {
			return fmt.Errorf("%s: its target is now %s", o.Name, typeName(tf.Mode().Type()))
		}
	}
	if o.Name == "directory" {
		if ents, err := os.ReadDir(o.Path); err != nil || len(ents) > 0 {
			return fmt.Errorf("directory %s now holds %d entries (%v)", o.Path, len(ents), err)
		}
	}
	slices.Sort(names)
	ents, err := os.ReadDir(o.dir)
	if err != nil {
		return err
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if !slices.Equal(got, names) {
		return fmt.Errorf("%s: its folder holds %q, want %q", o.Name, got, names)
	}
	return nil
}

// typeName names a file type: "a regular file" for none.
func typeName(m fs.FileMode) string {
	if m == 0 {
		return "a regular file"
	}
	return m.String()
}

// Content is what a writer left at o: the bytes of a link's target file,
// or what the FIFO's reader has read once it has read at least one byte
// (waiting up to a minute); nil for the others.
func (o Output) Content(t testing.TB) []byte {
	t.Helper()
	switch {
	case o.fifo != nil:
		return o.fifo.wait(t)
	case o.target != "" && !o.Direct:
		b, err := os.ReadFile(filepath.Join(o.dir, o.target))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	return nil
}

// fifoRead is a FIFO held open for reading and writing (so that a
// writer's open(2) does not wait, and no writer's close ends the reads),
// drained into buf until the test ends. Each read and its append happen
// under mu, so that with mu held and nothing left in the pipe, buf holds
// every byte written so far.
type fifoRead struct {
	rc  syscall.RawConn
	mu  sync.Mutex
	buf bytes.Buffer
}

func readFIFO(t testing.TB, p string) *fifoRead {
	t.Helper()
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	r := &fifoRead{rc: rc}
	done := make(chan struct{})
	go func() {
		defer close(done)
		b := make([]byte, 64<<10)
		rc.Read(func(fd uintptr) bool {
			for {
				r.mu.Lock()
				n, err := unix.Read(int(fd), b)
				r.buf.Write(b[:max(n, 0)])
				r.mu.Unlock()
				if err == unix.EAGAIN {
					return false // wait until there is more
				}
				if err != nil || n == 0 {
					return true
				}
			}
		})
	}()
	t.Cleanup(func() { f.Close(); <-done })
	return r
}

// errNothingRead ends wait's minute without a byte.
var errNothingRead = errors.New("nothing read from the FIFO in a minute")

// wait returns what was written to the FIFO, once at least one byte was
// and none is left unread in the pipe, waiting up to a minute.
func (r *fifoRead) wait(t testing.TB) []byte {
	t.Helper()
	for end := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		var pending int
		var err error
		r.mu.Lock()
		cerr := r.rc.Control(func(fd uintptr) { pending, err = unix.IoctlGetInt(int(fd), unix.TIOCINQ) }) // FIONREAD
		b := bytes.Clone(r.buf.Bytes())
		r.mu.Unlock()
		if err = errors.Join(cerr, err); err != nil {
			t.Fatalf("FIFO: %v", err)
		}
		if len(b) > 0 && pending == 0 {
			return b
		}
		if time.Now().After(end) {
			t.Fatal(errNothingRead)
		}
	}
}
