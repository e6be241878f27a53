package fsutil

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// withUmask runs the test under umask m.
func withUmask(t *testing.T, m int) {
	t.Helper()
	old := unix.Umask(m)
	t.Cleanup(func() { unix.Umask(old) })
}

// onlyEntries fails unless dir holds exactly the names given (no temporary
// files left behind).
func onlyEntries(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Fatalf("%s holds %v, want %v", dir, got, names)
	}
}

// TestCreateOutputMode: a new file gets 0666 less the umask (Create's
// temp files are 0600 whatever the umask); a replaced file keeps its mode.
func TestCreateOutputMode(t *testing.T) {
	for _, c := range []struct {
		name     string
		umask    int
		existing fs.FileMode // 0: no file yet
		want     fs.FileMode
	}{
		{"new, umask 022", 0o022, 0, 0o644},
		{"new, umask 002", 0o002, 0, 0o664},
		{"new, umask 077", 0o077, 0, 0o600},
		{"replaced 0640, umask 022", 0o022, 0o640, 0o640},
		{"replaced 0666, umask 077", 0o077, 0o666, 0o666},
	} {
		t.Run(c.name, func(t *testing.T) {
			withUmask(t, c.umask)
			dir := t.TempDir()
			p := filepath.Join(dir, "out.csv")
			if c.existing != 0 {
				if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(p, c.existing); err != nil {
					t.Fatal(err)
				}
			}
			if err := WriteOutput(p, []byte("new")); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Lstat(p)
			if err != nil {
				t.Fatal(err)
			}
			if !fi.Mode().IsRegular() || fi.Mode().Perm() != c.want {
				t.Fatalf("mode %v, want regular %v", fi.Mode(), c.want)
			}
			if b, _ := os.ReadFile(p); string(b) != "new" {
				t.Fatalf("content %q", b)
			}
			onlyEntries(t, dir, "out.csv")
		})
	}
}

// TestCreateOutputSymlink: the link's target is replaced, the link stays;
// relative targets, chains and dangling links are followed as open(2)
// would.
func TestCreateOutputSymlink(t *testing.T) {
	withUmask(t, 0o022)
	for _, c := range []struct {
		name   string
		files  []string // created with "old"
		links  [][2]string
		write  string
		target string // where the bytes must land
	}{
		{"relative", []string{"t.csv"}, [][2]string{{"link.csv", "t.csv"}}, "link.csv", "t.csv"},
		{"chain", []string{"sub/t.csv"}, [][2]string{{"a", "b"}, {"b", "sub/t.csv"}}, "a", "sub/t.csv"},
		{"dangling", []string{"sub/keep"}, [][2]string{{"link.csv", "sub/new.csv"}}, "link.csv", "sub/new.csv"},
		{"relative to its own dir", []string{"sub/t.csv"}, [][2]string{{"sub/link", "t.csv"}}, "sub/link", "sub/t.csv"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range c.files {
				p := filepath.Join(dir, f)
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			for _, l := range c.links {
				if err := os.Symlink(l[1], filepath.Join(dir, l[0])); err != nil {
					t.Fatal(err)
				}
			}
			if err := WriteOutput(filepath.Join(dir, c.write), []byte("new")); err != nil {
				t.Fatal(err)
			}
			for _, l := range c.links {
				if to, err := os.Readlink(filepath.Join(dir, l[0])); err != nil || to != l[1] {
					t.Fatalf("link %s now %q, %v", l[0], to, err)
				}
			}
			if b, err := os.ReadFile(filepath.Join(dir, c.target)); err != nil || string(b) != "new" {
				t.Fatalf("target holds %q, %v", b, err)
			}
			if fi, _ := os.Lstat(filepath.Join(dir, c.target)); !fi.Mode().IsRegular() {
				t.Fatalf("target is %v", fi.Mode())
			}
		})
	}
}

// TestCreateOutputFIFO: a FIFO's reader gets the bytes; the FIFO stays,
// and nothing else appears beside it.
func TestCreateOutputFIFO(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "ff")
	if err := unix.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan string)
	go func() {
		r, err := os.Open(p)
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(r)
		r.Close()
		got <- string(b)
	}()
	if err := CheckOutput(p); err != nil {
		t.Fatal(err)
	}
	if err := WriteOutput(p, []byte("rows\n")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "rows\n" {
		t.Fatalf("reader got %q", s)
	}
	if fi, err := os.Lstat(p); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Fatalf("FIFO replaced: %v, %v", fi.Mode(), err)
	}
	onlyEntries(t, dir, "ff")
}

// TestCreateOutputProcLink: /proc/self/fd/N (what /dev/stdout is) is
// written through, to a pipe or to the file a shell redirected to, and
// not replaced by a new file.
func TestCreateOutputProcLink(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, p := range []string{"/proc/self/fd/", "/dev/fd/"} {
		p += strconv.Itoa(int(w.Fd()))
		if _, err := os.Lstat(p); err != nil {
			t.Skipf("no %s: %v", p, err)
		}
		if err := WriteOutput(p, []byte("x")); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 1)
		if _, err := io.ReadFull(r, b); err != nil || b[0] != 'x' {
			t.Fatalf("%s: pipe got %q, %v", p, b, err)
		}
	}

	// A redirection "> log": the bytes are appended to the open file,
	// which keeps its inode.
	log := filepath.Join(t.TempDir(), "log")
	lf, err := os.OpenFile(log, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	lf.WriteString("head\n")
	before, _ := os.Stat(log)
	if err := WriteOutput("/proc/self/fd/"+strconv.Itoa(int(lf.Fd())), []byte("stats\n")); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(log)
	if !os.SameFile(before, after) {
		t.Fatal("the redirected file was replaced")
	}
	if b, _ := os.ReadFile(log); string(b) != "head\nstats\n" {
		t.Fatalf("log holds %q", b)
	}
}

// TestCreateOutputDevices writes a null and a full device (as root
// nodes made in a temporary folder, not /dev/null and /dev/full, which
// root could replace if this broke; otherwise those, which it cannot)
// only once sure they would be opened in place: the write error must
// come back, and both must still be character devices.
func TestCreateOutputDevices(t *testing.T) {
	null, full := "/dev/null", "/dev/full"
	if os.Geteuid() == 0 {
		dir := t.TempDir()
		null, full = filepath.Join(dir, "null"), filepath.Join(dir, "full")
		for dev, minor := range map[string]uint32{null: 3, full: 7} {
			if err := unix.Mknod(dev, unix.S_IFCHR|0o666, int(unix.Mkdev(1, minor))); err != nil {
				t.Skipf("cannot make %s: %v", dev, err)
			}
		}
	}
	for _, dev := range []string{null, full} {
		fi, err := os.Lstat(dev)
		if err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
			t.Skipf("%s is not a character device here", dev)
		}
		tg, err := resolveOutput(dev)
		if err != nil || tg.kind != outDirect || tg.path != dev {
			t.Fatalf("%s resolves to %+v, %v: would not be written in place", dev, tg, err)
		}
		if err := CheckOutput(dev); err != nil {
			t.Fatal(err)
		}
	}
	f, err := CreateOutput(full)
	if err != nil {
		t.Fatal(err)
	}
	if !f.direct || f.Name() != full {
		f.Abort()
		t.Fatalf("%s opened as %s", full, f.Name())
	}
	_, werr := f.Write([]byte("x"))
	if !errors.Is(werr, unix.ENOSPC) {
		t.Fatalf("write to %s: %v, want ENOSPC", full, werr)
	}
	f.Abort()
	if err := f.Commit(); err == nil {
		t.Fatal("commit after abort succeeded")
	}
	if err := WriteOutput(full, []byte("x")); !errors.Is(err, unix.ENOSPC) {
		t.Fatalf("WriteOutput(%s): %v", full, err)
	}
	if err := WriteOutput(null, []byte("x")); err != nil {
		t.Fatalf("WriteOutput(%s): %v", null, err)
	}
	for _, dev := range []string{null, full} {
		if fi, err := os.Lstat(dev); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
			t.Fatalf("%s is no longer a character device: %v, %v", dev, fi.Mode(), err)
		}
	}
}

// TestCreateOutputRefuses: a directory, a socket (open(2) cannot write
// one) and a missing directory are errors, and nothing is replaced.
func TestCreateOutputRefuses(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	os.Mkdir(filepath.Join(dir, "d"), 0o755)
	os.Symlink("d", filepath.Join(dir, "dlink"))
	for _, c := range []struct {
		name, path string
		check      bool // CheckOutput catches it too
	}{
		{"directory", filepath.Join(dir, "d"), true},
		{"link to a directory", filepath.Join(dir, "dlink"), true},
		{"missing directory", filepath.Join(dir, "nope", "s.json"), true},
		{"file as directory", filepath.Join(sock, "s.json"), true},
		{"socket", sock, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := CheckOutput(c.path); (err != nil) != c.check {
				t.Fatalf("CheckOutput: %v", err)
			}
			if err := WriteOutput(c.path, []byte("x")); err == nil {
				t.Fatal("WriteOutput succeeded")
			}
		})
	}
	if fi, err := os.Lstat(sock); err != nil || fi.Mode()&fs.ModeSocket == 0 {
		t.Fatalf("socket replaced: %v, %v", fi.Mode(), err)
	}
	onlyEntries(t, dir, "d", "dlink", "s.sock")
	if err := CheckOutput(filepath.Join(dir, "new.json")); err != nil {
		t.Fatalf("CheckOutput of a new file: %v", err)
	}
}

// TestCheckOutputUnwritableDir needs a user the permission bits bind.
func TestCheckOutputUnwritableDir(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes anywhere")
	}
	dir := filepath.Join(t.TempDir(), "ro")
	os.Mkdir(dir, 0o555)
	if err := CheckOutput(filepath.Join(dir, "s.json")); err == nil {
		t.Fatal("CheckOutput accepted a read-only directory")
	}
}

// TestOutputEmptyPath: an empty path ("-o $OUT" with OUT unset) is
// refused by CheckOutput and CreateOutput, before a temporary file is
// made: CreateOutput took it for a new file in the working directory and
// only Commit's rename failed, after the work (and plan-retries' commit).
func TestOutputEmptyPath(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := CheckOutput(""); err == nil {
		t.Error("CheckOutput accepted an empty path")
	}
	if f, err := CreateOutput(""); err == nil {
		f.Abort()
		t.Error("CreateOutput accepted an empty path")
	}
	onlyEntries(t, dir)
}

// TestCreateOutputProcSocket: under systemd, stdout is often a socket
// (journald), and open(2) cannot open a socket through /dev/stdout or
// /dev/fd/N. Such an output of our own process is written through the
// descriptor itself; the precheck and the write agree.
func TestCreateOutputProcSocket(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Skipf("socketpair: %v", err)
	}
	r, w := os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
	defer r.Close()
	defer w.Close()
	for _, p := range []string{"/proc/self/fd/", "/dev/fd/", fmt.Sprintf("/proc/%d/fd/", os.Getpid())} {
		p += strconv.Itoa(int(w.Fd()))
		if _, err := os.Lstat(p); err != nil {
			t.Skipf("no %s: %v", p, err)
		}
		if err := CheckOutput(p); err != nil {
			t.Fatalf("CheckOutput(%s): %v", p, err)
		}
		if err := WriteOutput(p, []byte("x")); err != nil {
			t.Fatalf("WriteOutput(%s): %v", p, err)
		}
		b := make([]byte, 1)
		if _, err := io.ReadFull(r, b); err != nil || b[0] != 'x' {
			t.Fatalf("%s: socket got %q, %v", p, b, err)
		}
	}
	// The descriptor stays open for the rest of the process: only the
	// duplicate was closed.
	if _, err := w.Write([]byte("y")); err != nil {
		t.Fatalf("the socket was closed: %v", err)
	}
}

// TestWrittenInPlace: a FIFO, a device and a /proc link (/dev/stdout,
// /dev/fd/N) are written in place, through symbolic links too; a regular
// file, a link to one and a new name are not.
func TestWrittenInPlace(t *testing.T) {
	dir := t.TempDir()
	fifo, file := filepath.Join(dir, "fifo"), filepath.Join(dir, "file")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for link, to := range map[string]string{"to-fifo": "fifo", "to-file": "file"} {
		if err := os.Symlink(to, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	for path, want := range map[string]bool{
		fifo: true, filepath.Join(dir, "to-fifo"): true, "/dev/null": true, "/dev/stdout": true, "/dev/fd/2": true,
		file: false, filepath.Join(dir, "to-file"): false, filepath.Join(dir, "new"): false, "": false,
	} {
		if got := WrittenInPlace(path); got != want {
			t.Errorf("WrittenInPlace(%q) = %v, want %v", path, got, want)
		}
	}
}

// TestOutputDirCannotTakeAFile: a folder that refuses new files though
// access(2) lets root write it (/proc, /sys) fails CheckOutput, naming the
// output and keeping the cause, and CreateOutput names the output, not
// its temporary file (it said "open /sys/.tmp-x.csv-…: permission
// denied", and CheckOutput passed it). Nothing is left there.
func TestOutputDirCannotTakeAFile(t *testing.T) {
	for _, c := range []struct {
		name, path string
		fs         int64 // the statfs type the folder must have
	}{
		{"proc", "/proc/x", unix.PROC_SUPER_MAGIC},
		{"sysfs", "/sys/x.csv", unix.SYSFS_MAGIC},
	} {
		t.Run(c.name, func(t *testing.T) {
			var st unix.Statfs_t
			if err := unix.Statfs(filepath.Dir(c.path), &st); err != nil || int64(st.Type) != c.fs {
				t.Skipf("%s is not %s here", filepath.Dir(c.path), c.name)
			}
			err := CheckOutput(c.path)
			if err == nil || !strings.HasPrefix(err.Error(), c.path+": directory "+filepath.Dir(c.path)+" ") {
				t.Errorf("CheckOutput: %v; want an error naming %s and its directory", err, c.path)
			}
			f, err := CreateOutput(c.path)
			if err == nil {
				f.Abort()
				t.Fatal("CreateOutput succeeded")
			}
			pe, ok := errors.AsType[*fs.PathError](err)
			if !ok || pe.Path != c.path || strings.Contains(err.Error(), TempPrefix) || errors.Is(pe.Err, fs.ErrExist) {
				t.Errorf("CreateOutput: %v; want an error naming %s with its cause, not a temporary name", err, c.path)
			}
			ents, _ := os.ReadDir(filepath.Dir(c.path))
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), TempPrefix) {
					t.Errorf("left %s", e.Name())
				}
			}
		})
	}
}
