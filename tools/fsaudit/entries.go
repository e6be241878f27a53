package fsaudit

import (
	"path"
	"strings"
)

// rename replays rename, renameat and renameat2 (RENAME_EXCHANGE swaps).
func (a *auditor) rename(ev *Event) {
	at := ev.Name != "rename"
	od, op := atArgs(ev, 0, at)
	nd, np := ev.arg(1), ev.arg(1)
	if at {
		nd, np = ev.arg(2), ev.arg(3)
	} else {
		nd = "AT_FDCWD"
	}
	from, to := a.path(od, op), a.path(nd, np)
	if from == "" || to == "" || from == to {
		return
	}
	sd, sb := a.fs.parentOf(from)
	dd, db := a.fs.parentOf(to)
	if sd == nil || dd == nil {
		return
	}
	src := a.fs.child(sd, sb, 'f')
	if src == nil || src == a.fs.root || within(dd, src) {
		return
	}
	old := a.fs.child(dd, db, 'f')
	exchange := strings.Contains(ev.arg(4), "RENAME_EXCHANGE")
	a.removing(ev, sd, sb, from)
	if !exchange {
		a.unspooling(ev, src, from, to)
	}
	if old != nil && !exchange {
		a.removing(ev, dd, db, to)
	}
	a.publishing(ev, src, to)
	if exchange {
		a.fs.setEntry(dd, db, src, ev.Line, ev.Name)
		a.fs.setEntry(sd, sb, old, ev.Line, ev.Name)
		return
	}
	a.fs.setEntry(sd, sb, nil, ev.Line, ev.Name)
	a.fs.setEntry(dd, db, src, ev.Line, ev.Name)
}

// link replays link and linkat: a new name for a file.
func (a *auditor) link(ev *Event) {
	at := ev.Name == "linkat"
	od, op := atArgs(ev, 0, at)
	nd, np := "AT_FDCWD", ev.arg(1)
	if at {
		nd, np = ev.arg(2), ev.arg(3)
	}
	from, to := a.path(od, op), a.path(nd, np)
	if from == "" || to == "" {
		return
	}
	var src *node
	switch d := a.procFD(from); {
	case d != nil: // linkat(/proc/self/fd/N): an O_TMPFILE file gets a name
		src = d.n
	case at && strings.Contains(ev.arg(4), "AT_EMPTY_PATH"):
		if d := a.fd(od); d != nil {
			src = d.n
		}
	default:
		src = a.fs.lookup(from, strings.Contains(ev.arg(4), "AT_SYMLINK_FOLLOW"))
	}
	dd, db := a.fs.parentOf(to)
	if src == nil || dd == nil {
		return
	}
	a.publishing(ev, src, to)
	a.fs.setEntry(dd, db, src, ev.Line, ev.Name)
}

// symlink replays symlink and symlinkat.
func (a *auditor) symlink(ev *Event) {
	target, _, ok := strArg(ev.arg(0))
	if !ok {
		return
	}
	dirfd, parg := atArgs(ev, 1, ev.Name == "symlinkat")
	p := a.path(dirfd, parg)
	if d, b := a.fs.parentOf(p); d != nil {
		a.fs.setEntry(d, b, &node{kind: 'l', fs: d.fs, target: string(target)}, ev.Line, ev.Name)
	}
}

// unlink replays unlink, unlinkat and rmdir.
func (a *auditor) unlink(ev *Event) {
	dirfd, parg := atArgs(ev, 0, ev.Name == "unlinkat")
	p := a.path(dirfd, parg)
	d, b := a.fs.parentOf(p)
	if d == nil {
		return
	}
	n := a.fs.child(d, b, 'f')
	a.removing(ev, d, b, p)
	a.unspooling(ev, n, p, "")
	a.fs.setEntry(d, b, nil, ev.Line, ev.Name)
}

// mkdir replays mkdir and mkdirat.
func (a *auditor) mkdir(ev *Event) {
	dirfd, parg := atArgs(ev, 0, ev.Name == "mkdirat")
	p := a.path(dirfd, parg)
	d, b := a.fs.parentOf(p)
	if d == nil {
		return
	}
	n := newDir(true)
	n.fs = d.fs
	if id, ok := a.fs.mounts[path.Join(d.pathOf(), b)]; ok {
		n.fs = id
	}
	a.fs.setEntry(d, b, n, ev.Line, ev.Name)
}
