package fsaudit

import (
	"maps"
	"path"
	"slices"
	"strings"
)

// A call changes the file system somewhere between its entry and its
// exit, and the replay applies it at its exit: at its "<... resumed>"
// line when another thread's lines came between. But strace prints that
// line only once the thread stops at the exit, and a thread preempted
// after the kernel's work, before that stop, leaves its call unfinished
// while other threads go on: one of them may use what it made, in lines
// printed first. Go's os.MkdirAll in two goroutines does it (the second
// one's stat finds the folder and it creates a file in it, before the
// first one's "<... mkdirat resumed>) = 0"): replayed in line order, that
// file's open found no folder and the file was lost, and a commit that
// moved it in was reported as missing it.
//
// So a call that needs what an unfinished call of another thread makes
// settles that call first: when a successful call names a path under a
// folder (or the file) that an unfinished mkdir, open with O_CREAT,
// rename, link or symlink makes, and the replay has nothing there yet,
// that call is applied at once, at the needing call's line (it had
// happened by then), and not again at its resumed line. Likewise a call
// that makes a name only where there is none (mkdir, link, symlink, an
// open with O_EXCL) settles an unfinished removal of that name (unlink,
// rmdir, a rename away from it). The other direction needs nothing: a
// call that ends after a sync began is not covered by it, whichever
// happened first.

// inflight is what the replay knows of the calls other threads have not
// finished: the Entry of each thread's unfinished call that makes or
// removes a name, and the threads whose call was settled early.
type inflight struct {
	entries map[int]*Event
	settled map[int]bool
}

// started notes an Entry: the thread's call now in flight.
func (f *inflight) started(a *auditor, ev *Event) {
	delete(f.settled, ev.PID)
	if makes, removes := a.names(ev); makes != "" || removes != "" {
		f.entries[ev.PID] = ev
	} else {
		delete(f.entries, ev.PID)
	}
}

// ended forgets the thread's call in flight as its Call comes, and
// reports whether it was settled early (its change is made already; if
// it failed after all, that stays: the call that needed it succeeded).
func (f *inflight) ended(ev *Event) bool {
	delete(f.entries, ev.PID)
	early := f.settled[ev.PID] && ev.Start != ev.Line
	delete(f.settled, ev.PID)
	return early
}

// names gives the path a call makes (the new name of a mkdir, an open
// with O_CREAT, a rename, link or symlink) and the one it removes (an
// unlink's or rmdir's, a rename's old name), "" for none.
func (a *auditor) names(ev *Event) (makes, removes string) {
	switch ev.Name {
	case "mkdir", "mkdirat":
		makes = a.path(atArgs(ev, 0, ev.Name == "mkdirat"))
	case "open", "openat", "creat":
		if ev.Name == "creat" || strings.Contains(openFlags(ev), "O_CREAT") {
			makes = a.path(atArgs(ev, 0, ev.Name == "openat"))
		}
	case "rename", "renameat", "renameat2", "link", "linkat":
		if ev.Name == "rename" || ev.Name == "link" {
			makes = a.path("AT_FDCWD", ev.arg(1))
		} else {
			makes = a.path(ev.arg(2), ev.arg(3))
		}
		if strings.HasPrefix(ev.Name, "rename") && !strings.Contains(ev.arg(4), "RENAME_EXCHANGE") {
			removes = a.path(atArgs(ev, 0, ev.Name != "rename"))
		}
	case "symlink", "symlinkat":
		makes = a.path(atArgs(ev, 1, ev.Name == "symlinkat"))
	case "unlink", "unlinkat", "rmdir":
		removes = a.path(atArgs(ev, 0, ev.Name == "unlinkat"))
	}
	return makes, removes
}

// openFlags is an open call's flags argument.
func openFlags(ev *Event) string {
	if ev.Name == "openat" {
		return ev.arg(2)
	}
	return ev.arg(1)
}

// exclusive reports whether a call that makes a name fails where the name
// is taken.
func exclusive(ev *Event) bool {
	switch ev.Name {
	case "mkdir", "mkdirat", "link", "linkat", "symlink", "symlinkat":
		return true
	case "open", "openat":
		return strings.Contains(openFlags(ev), "O_EXCL")
	case "renameat2":
		return strings.Contains(ev.arg(4), "RENAME_NOREPLACE")
	}
	return false
}

// named lists the paths a call names: its path arguments, resolved, and
// the one -y printed for its first descriptor.
func (a *auditor) named(ev *Event) []string {
	var ps []string
	add := func(dirfd, arg string) {
		if p := a.path(dirfd, arg); p != "" {
			ps = append(ps, p)
		}
	}
	switch ev.Name {
	case "open", "creat", "mkdir", "unlink", "rmdir", "truncate", "chdir":
		add("AT_FDCWD", ev.arg(0))
	case "rename", "link":
		add("AT_FDCWD", ev.arg(0))
		add("AT_FDCWD", ev.arg(1))
	case "symlink":
		add("AT_FDCWD", ev.arg(1))
	case "openat", "mkdirat", "unlinkat":
		add(ev.arg(0), ev.arg(1))
	case "renameat", "renameat2", "linkat":
		add(ev.arg(0), ev.arg(1))
		add(ev.arg(2), ev.arg(3))
	case "symlinkat":
		add(ev.arg(1), ev.arg(2))
	}
	if _, p, ok := fdArg(ev.arg(0)); ok && strings.HasPrefix(p, "/") {
		ps = append(ps, path.Clean(p))
	}
	return ps
}

// settle applies first the unfinished calls of other threads that ev, a
// successful call about to be replayed, shows to have happened.
func (a *auditor) settle(ev *Event) {
	if len(a.flight.entries) == 0 {
		return
	}
	own, _ := a.names(ev)
	type due struct {
		e    *Event
		name string // what it makes that ev needs, or removes
	}
	var dues []due
	for _, pid := range slices.Sorted(maps.Keys(a.flight.entries)) {
		e := a.flight.entries[pid]
		if pid == ev.PID || a.flight.settled[pid] {
			continue
		}
		makes, removes := a.names(e)
		if makes != "" && !a.fs.present(makes) {
			for _, p := range a.named(ev) {
				if strings.HasPrefix(p, makes+"/") || p == makes && p != own {
					dues = append(dues, due{e, makes})
					break
				}
			}
		}
		if removes != "" && removes == own && exclusive(ev) {
			dues = append(dues, due{e, removes})
		}
	}
	// a folder before what it holds
	slices.SortStableFunc(dues, func(x, y due) int {
		return strings.Count(x.name, "/") - strings.Count(y.name, "/")
	})
	for _, d := range dues {
		if !a.flight.settled[d.e.PID] { // (a rename may be due twice)
			a.flight.settled[d.e.PID] = true
			a.early(d.e, ev.Line)
		}
	}
}

// early applies the unfinished call e at line, as its Call would (had it
// succeeded).
func (a *auditor) early(e *Event, line int) {
	c := *e
	c.Kind, c.Line, c.Ret = Call, line, "0"
	switch e.Name {
	case "mkdir", "mkdirat":
		a.mkdir(&c)
	case "open", "openat", "creat":
		makes, _ := a.names(e)
		a.create(&c, makes)
	case "rename", "renameat", "renameat2":
		a.rename(&c)
	case "link", "linkat":
		a.link(&c)
	case "symlink", "symlinkat":
		a.symlink(&c)
	case "unlink", "unlinkat", "rmdir":
		a.unlink(&c)
	}
}

// present reports whether the replay has an entry at the absolute path p
// now, one the trace made (or a copy described). Unlike lookup it takes
// no unknown name of an incomplete folder for one from before the trace,
// nor one it took so already: an unfinished call may be making it.
func (f *fsys) present(p string) bool {
	cur := f.root
	for _, name := range strings.Split(strings.TrimPrefix(path.Clean(p), "/"), "/") {
		if name == "" {
			continue
		}
		c, ok := cur.vol[name]
		if !ok || cur.kind != 'd' {
			return false
		}
		cur = c
	}
	return !cur.guessed
}

// create finds the file an open with O_CREAT opens at p, or makes it;
// made reports a new one.
func (a *auditor) create(ev *Event, p string) (n *node, made bool) {
	dir, base := a.fs.parentOf(p)
	if dir == nil {
		return nil, false
	}
	if c, ok := dir.vol[base]; ok {
		if c.kind == 'l' {
			return a.fs.lookup(p, true), false
		}
		return c, false
	}
	n = &node{kind: 'f', fs: dir.fs, known: true, dknown: true}
	a.fs.setEntry(dir, base, n, ev.Line, ev.Name)
	a.spoolNamed(ev, n, p)
	return n, true
}
