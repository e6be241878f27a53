package fsaudit

import (
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Config says what to audit in a trace.
type Config struct {
	// Cwd is the traced process's working directory as it starts; ""
	// takes it from the AT_FDCWD</path> of the first *at() call.
	Cwd string
	// Before maps a path the trace sees to a folder that holds a copy of
	// it as it was when the trace began: its tree, durable (the script
	// syncs first), with the content of the CURRENT and manifests it
	// holds. Unknown paths elsewhere are taken for durable files whose
	// content is unknown.
	Before map[string]string
	// Datasets are dataset folders to check. A folder into which the
	// trace renames or links a CURRENT is checked too.
	Datasets []string
	// Outputs are files written by a step (-o FILE): renamed into place
	// only once their data is durable, and durable when the step exits.
	Outputs []string
	// Mounts are mount points: a syncfs makes durable only what is on
	// its file system. None: everything is on one.
	Mounts []string
	// Caches are files a step leaves for its next run, which starts cold
	// without them (a DHT state file): renamed into place only once their
	// data is durable, never written in place; their loss is harmless, so
	// the exit does not check them.
	Caches []string
}

// Violation is an instant of the trace at which a power cut would leave
// a last commit that is not whole (or a step exiting before its commit
// is durable).
type Violation struct {
	Line int    // the trace line of the instant
	Call string // the system call there
	Path string // the file at stake
	What string // what is not durable, and why
}

func (v Violation) String() string {
	return fmt.Sprintf("line %d: %s %s: %s", v.Line, v.Call, v.Path, v.What)
}

// Report is what Audit found.
type Report struct {
	Lines   int // of the trace
	Calls   int // system calls replayed
	Commits int // renames onto a CURRENT
	Syncs   int // fsync, fdatasync, syncfs and sync calls
	Exit    int // the exit status, -1 if the trace shows none
	// Held counts the files (CURRENT, manifest, data, Bloom) of the durable
	// commits checked last: at the exit, or the trace's end.
	Held       int
	Violations []Violation
}

type fdesc struct {
	n      *node
	off    int64
	append bool
}

type auditor struct {
	cfg      Config
	leader   int // the first thread's pid
	fs       *fsys
	cwd      string
	fds      map[int64]*fdesc
	entered  map[int]*fdesc // per thread: the file its unfinished call's first argument names
	datasets []*dataset
	outputs  map[string]int   // output path -> line of its rename (0: none yet)
	caches   map[string]*node // cache path -> the file there (nil: none yet)
	spools   map[*node]int    // a spool -> the line it got its name
	flight   inflight         // the unfinished calls of other threads
	rep      *Report
	seen     map[string]bool
	exited   bool
}

// Audit replays an strace -f -y trace (see the package comment for what
// it needs traced) through the durability model and reports every
// violation, each once, at the first instant it holds.
func Audit(r io.Reader, cfg Config) (*Report, error) {
	a := &auditor{cfg: cfg, fs: newFS(cfg.Mounts), cwd: cfg.Cwd, fds: map[int64]*fdesc{}, entered: map[int]*fdesc{},
		outputs: map[string]int{}, caches: map[string]*node{}, spools: map[*node]int{}, rep: &Report{Exit: -1}, seen: map[string]bool{},
		flight: inflight{entries: map[int]*Event{}, settled: map[int]bool{}}}
	for _, o := range cfg.Outputs {
		a.outputs[path.Clean(o)] = 0
	}
	for _, c := range cfg.Caches {
		a.caches[path.Clean(c)] = nil
	}
	befores := make([]string, 0, len(cfg.Before))
	for p := range cfg.Before {
		befores = append(befores, p)
	}
	slices.Sort(befores) // parents first
	for _, p := range befores {
		if err := a.fs.load(path.Clean(p), cfg.Before[p]); err != nil {
			return nil, err
		}
		if n := a.fs.lookup(path.Join(p, "CURRENT"), false); n != nil {
			a.dataset(path.Clean(p))
		}
	}
	for _, d := range cfg.Datasets {
		a.dataset(path.Clean(d))
	}
	a.recheck(&Event{Name: "(start)"})
	err := Parse(r, func(ev *Event) error {
		a.rep.Lines = ev.Line
		a.event(ev)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !a.exited {
		a.recheck(&Event{Line: a.rep.Lines, Name: "(end)"})
	}
	for _, ds := range a.datasets {
		a.rep.Held += len(ds.needFiles)
	}
	return a.rep, nil
}

func (a *auditor) event(ev *Event) {
	if a.leader == 0 {
		a.leader = ev.PID // the traced process: its first thread
	}
	if ev.Name == "exit_group" && ev.Kind != Exit {
		// it never returns: its line may stay unfinished
		s, _ := strconv.Atoi(ev.arg(0))
		a.exit(ev, s)
		return
	}
	switch ev.Kind {
	case Exit:
		// A thread's own end says nothing; the process's does, if no
		// exit_group was seen (a trace without -f has no pids).
		if ev.PID == a.leader {
			ev.Name = "+++ exited"
			a.exit(ev, ev.Status)
		}
		a.flight.ended(ev) // its unfinished call, if any, never ended
		return
	case Entry:
		// The descriptor is the one open as the call starts: close it
		// now, before another thread's open can reuse its number, and
		// note what another names (its Call comes with the resumed line).
		if n, _, ok := fdArg(ev.arg(0)); ok && ev.Name == "close" {
			delete(a.fds, n)
		} else if ok && n >= 0 {
			a.entered[ev.PID] = a.fd(ev.arg(0))
		}
		a.flight.started(a, ev)
		return
	}
	a.rep.Calls++
	early := a.flight.ended(ev)
	if ev.Name == "close" && ev.Start == ev.Line && len(ev.Args) > 0 {
		n, _, _ := fdArg(ev.Args[0])
		delete(a.fds, n)
	}
	if ev.Failed() {
		return
	}
	if a.cwd == "" && len(ev.Args) > 0 && strings.HasPrefix(ev.Args[0], "AT_FDCWD<") {
		_, a.cwd, _ = fdArg(ev.Args[0])
	}
	if early && !strings.HasPrefix(ev.Name, "open") && ev.Name != "creat" {
		return // made as another thread needed it (settle)
	}
	a.settle(ev)
	switch ev.Name {
	case "open", "openat", "creat":
		a.open(ev, early)
	case "write", "pwrite64", "writev", "pwritev", "pwritev2":
		a.write(ev)
	case "ftruncate", "fallocate", "copy_file_range", "sendfile", "splice", "truncate":
		a.modify(ev)
	case "lseek":
		if d := a.fd(ev.arg(0)); d != nil {
			d.off = ev.RetInt()
		}
	case "fsync", "fdatasync", "syncfs", "sync":
		a.sync(ev)
	case "rename", "renameat", "renameat2":
		a.rename(ev)
	case "link", "linkat":
		a.link(ev)
	case "symlink", "symlinkat":
		a.symlink(ev)
	case "unlink", "unlinkat", "rmdir":
		a.unlink(ev)
	case "mkdir", "mkdirat":
		a.mkdir(ev)
	case "chdir":
		a.cwd = a.path("AT_FDCWD", ev.arg(0))
	case "fchdir":
		if d := a.fd(ev.arg(0)); d != nil && asDir(d.n) {
			a.cwd = d.n.pathOf()
		}
	case "dup", "dup2", "dup3", "fcntl":
		if ev.Name == "fcntl" && !strings.HasPrefix(ev.arg(1), "F_DUPFD") {
			return
		}
		if d := a.fd(ev.arg(0)); d != nil {
			a.fds[ev.RetInt()] = d
		}
	}
}

func (e *Event) arg(i int) string {
	if i < len(e.Args) {
		return e.Args[i]
	}
	return ""
}

// path resolves the path argument p of a call against its directory
// argument dirfd (AT_FDCWD: the working directory).
func (a *auditor) path(dirfd, p string) string {
	b, _, ok := strArg(p)
	if !ok {
		return ""
	}
	s := string(b)
	if strings.HasPrefix(s, "/") {
		return path.Clean(s)
	}
	n, fdPath, _ := fdArg(dirfd)
	base := a.cwd
	if n != -100 {
		base = fdPath
		if d := a.fds[n]; d != nil && asDir(d.n) {
			base = d.n.pathOf()
		}
	} else if base == "" {
		base = fdPath
	}
	if base == "" {
		return ""
	}
	return path.Join(base, s)
}

// fd0 is the open file ev's first argument names, as the call started.
func (a *auditor) fd0(ev *Event) *fdesc {
	if d, ok := a.entered[ev.PID]; ok && ev.Start != ev.Line {
		delete(a.entered, ev.PID)
		return d
	}
	return a.fd(ev.arg(0))
}

// procFD is the open file a path /proc/self/fd/N (or /proc/PID/fd/N)
// names, nil for another path.
func (a *auditor) procFD(p string) *fdesc {
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok {
		return nil
	}
	_, num, ok := strings.Cut(rest, "/fd/")
	if !ok {
		return nil
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return nil
	}
	return a.fds[n]
}

// fd finds the open file an fd argument names: by the descriptors the
// trace opened, else by the path -y printed.
func (a *auditor) fd(arg string) *fdesc {
	n, p, ok := fdArg(arg)
	if !ok {
		return nil
	}
	if p != "" && !strings.HasPrefix(p, "/") {
		// a socket, pipe or anon inode ("socket:[5]", -yy's
		// "UDP:[127.0.0.1:6881]"): no file, whatever the trace last saw
		// open under its number (a socket's or accept's descriptor comes
		// from calls not traced)
		delete(a.fds, n)
		return nil
	}
	if d := a.fds[n]; d != nil {
		return d
	}
	if !strings.HasPrefix(p, "/") || strings.HasSuffix(arg, "(deleted)") || strings.HasPrefix(p, "/proc/") {
		return nil
	}
	if nd := a.fs.lookup(p, true); nd != nil {
		d := &fdesc{n: nd}
		a.fds[n] = d
		return d
	}
	return nil
}

// atArgs gives the dirfd and path arguments of a call at index i: the
// *at() form has a dirfd before the path, the old one none.
func atArgs(ev *Event, i int, at bool) (string, string) {
	if at {
		return ev.arg(i), ev.arg(i + 1)
	}
	return "AT_FDCWD", ev.arg(i)
}

// open replays open, openat and creat; early: the file it creates was
// made as another thread needed it (settle).
func (a *auditor) open(ev *Event, early bool) {
	dirfd, parg := atArgs(ev, 0, ev.Name == "openat")
	flags := ev.arg(1)
	if ev.Name == "openat" {
		flags = ev.arg(2)
	}
	if ev.Name == "creat" {
		flags = "O_CREAT|O_WRONLY|O_TRUNC"
	}
	p := a.path(dirfd, parg)
	if p == "" {
		return
	}
	var n *node
	if d := a.procFD(p); d != nil { // a reopen through /proc/self/fd/N
		n = d.n
	} else if strings.Contains(flags, "O_TMPFILE") {
		// a file with no name (yet) in the folder p
		dir := a.fs.walk(p, true, 'd', 0)
		if dir == nil || !asDir(dir) {
			return
		}
		n = &node{kind: 'f', fs: dir.fs, known: true, dknown: true}
	} else if strings.Contains(flags, "O_CREAT") {
		var made bool
		if n, made = a.create(ev, p); made || early {
			flags = strings.ReplaceAll(flags, "O_TRUNC", "") // a new file
		}
	} else {
		n = a.fs.lookup(p, !strings.Contains(flags, "O_NOFOLLOW"))
	}
	if n == nil {
		return
	}
	if strings.Contains(flags, "O_DIRECTORY") {
		asDir(n)
	}
	a.cacheOpened(p, n)
	if strings.Contains(flags, "O_TRUNC") && n.kind == 'f' {
		n.content, n.known = nil, true
		a.changed(n, ev)
	}
	a.fds[ev.RetInt()] = &fdesc{n: n, append: strings.Contains(flags, "O_APPEND")}
}

// write replays write, pwrite64, writev, pwritev and pwritev2: the data
// changes, and so does its content when the trace shows all of it.
func (a *auditor) write(ev *Event) {
	d := a.fd0(ev)
	if d == nil || d.n.kind != 'f' {
		return
	}
	n, size := d.n, ev.RetInt()
	var data []byte
	whole := true
	switch ev.Name {
	case "write", "pwrite64":
		b, cut, ok := strArg(ev.arg(1))
		data, whole = b, ok && !cut
	default:
		data, whole = iovData(ev.arg(1))
	}
	off := d.off
	switch {
	case ev.Name == "pwrite64" || ev.Name == "pwritev" || ev.Name == "pwritev2":
		o, _, ok := fdArg(ev.arg(3))
		off, whole = o, whole && ok
	case d.append:
		off, whole = int64(len(n.content)), whole && n.known
		d.off = off + size
	default:
		d.off += size
	}
	if n.known && whole && int64(len(data)) >= size && off >= 0 && off+size <= maxContent {
		if end := off + size; end > int64(len(n.content)) {
			n.content = append(n.content, make([]byte, end-int64(len(n.content)))...)
		}
		copy(n.content[off:], data[:size])
	} else {
		n.content, n.known = nil, false
	}
	a.changed(n, ev)
}

// iovData joins the iov_base strings of a writev's iovec array; whole is
// false when strace cut one short.
func iovData(arg string) (data []byte, whole bool) {
	whole = true
	for rest := arg; ; {
		i := strings.Index(rest, "iov_base=")
		if i < 0 {
			return data, whole
		}
		rest = rest[i+len("iov_base="):]
		b, cut, ok := strArg(rest)
		if !ok {
			return data, false
		}
		whole = whole && !cut
		data = append(data, b...)
		rest = rest[1:]
		rest = rest[skipQuoted(rest, 0, '"')+1:]
	}
}

// modify replays the calls that change a file's data without showing it.
func (a *auditor) modify(ev *Event) {
	var n *node
	switch ev.Name {
	case "truncate":
		n = a.fs.lookup(a.path("AT_FDCWD", ev.arg(0)), true)
	case "copy_file_range", "splice":
		if d := a.fd(ev.arg(2)); d != nil {
			n = d.n
		}
	default: // ftruncate, fallocate, sendfile: the first argument
		if d := a.fd0(ev); d != nil {
			n = d.n
		}
	}
	if n == nil || n.kind != 'f' {
		return
	}
	if (ev.Name == "ftruncate" || ev.Name == "truncate") && n.known {
		size, _, _ := fdArg(ev.arg(1))
		if size >= 0 && size <= int64(len(n.content)) {
			n.content = n.content[:size]
		} else if size > int64(len(n.content)) && size <= maxContent {
			n.content = append(n.content, make([]byte, size-int64(len(n.content)))...)
		} else {
			n.content, n.known = nil, false
		}
	} else {
		n.content, n.known = nil, false
	}
	a.changed(n, ev)
}

// changed records that n's data changed at ev.
func (a *auditor) changed(n *node, ev *Event) {
	a.fs.wrote(n, ev.Line, ev.Name)
	a.cacheWritten(n, ev)
	for _, ds := range a.datasets {
		if nd, ok := ds.needFiles[n]; ok {
			a.flag(ev, nd.path, "changes the data of what the durable CURRENT needs (a power cut may leave it half-written): ", nd.notDurable(n))
		}
	}
}

func (a *auditor) sync(ev *Event) {
	a.rep.Syncs++
	if ev.Name == "sync" {
		a.fs.syncFS(-1, ev.Start, ev.Line)
	} else if d := a.fd0(ev); d != nil {
		switch {
		case ev.Name == "syncfs":
			a.fs.syncFS(d.n.fs, ev.Start, ev.Line)
		case d.n.kind == 'd':
			a.fs.syncDir(d.n, ev.Start)
		default:
			a.fs.syncData(d.n, ev.Start, ev.Line)
		}
	}
	a.recheck(ev)
}
