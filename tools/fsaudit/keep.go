package fsaudit

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
)

// Two more kinds of file than a dataset's commit and a step's outputs:
//
//   - a cache (Config.Caches: a DHT state file) is left for the next run,
//     which starts cold without it: its loss is harmless, so its rename
//     need not be durable at the exit, but the next run must never read
//     it torn. It is renamed into place only once its data is durable,
//     and never written in place; and only into a folder whose entry
//     (each on its path) is durable: a run that makes the folder syncs
//     its parent, as it would a dataset's.
//   - a spool (a file in a dataset's inbox/: stdin as dedup or merge read
//     it) is the only copy of its input. It may be removed (unlinked, or
//     renamed out of inbox/) only once a commit that applies it is
//     durable: one renamed onto CURRENT after the spool got its name, and
//     the CURRENT now is the durable one. A spool from before the trace
//     may have been applied by an earlier run (its removal with no commit
//     in the trace is taken for that); temporary names (.tmp-) are no
//     spools yet. But whatever a step leaves in inbox/ when it exits (a
//     spool a stopped run kept under its temporary name, for the next
//     run to salvage) must be durably there under some name, with
//     durable data: it is the only copy of what the stream sent.

// tmpPrefix starts the temporary names of infohash's files.
const tmpPrefix = ".tmp-"

// cacheOpened notes the file opened at a cache's path: written from now
// on, it is written in place.
func (a *auditor) cacheOpened(p string, n *node) {
	if _, ok := a.caches[p]; ok {
		a.caches[p] = n
	}
}

// cachePublished checks a rename or link of src onto a cache's path.
func (a *auditor) cachePublished(ev *Event, src *node, to string) {
	if _, ok := a.caches[to]; !ok {
		return
	}
	a.caches[to] = src
	if src.wrote != 0 {
		a.flag(ev, to, "", "renames the cache into place before its data is durable (a power cut may leave the next run a torn file): "+unsynced(src))
	}
	dir := path.Dir(to)
	n, _, why := a.fs.durable(dir)
	if n == nil || n != a.fs.lookup(dir, true) {
		if n != nil {
			d, base := a.fs.parentOf(dir)
			why = missing(d, base, path.Dir(dir))
		}
		a.flag(ev, to, "", "renames the cache into a folder that is not durably there (a power cut may lose the folder with it): "+why)
	}
}

// cacheWritten flags a write to a file that is at a cache's path.
func (a *auditor) cacheWritten(n *node, ev *Event) {
	for p, c := range a.caches {
		if c == n {
			a.flag(ev, p, "", "writes the cache in place (a power cut may leave the next run a torn file)")
		}
	}
}

// spoolOf is the dataset whose inbox/ holds p, if p is a spool's path.
func (a *auditor) spoolOf(p string) *dataset {
	if strings.HasPrefix(path.Base(p), tmpPrefix) {
		return nil
	}
	for _, ds := range a.datasets {
		if strings.HasPrefix(p, ds.path+"/inbox/") {
			return ds
		}
	}
	return nil
}

// spoolNamed notes the line at which file n got the spool name to.
func (a *auditor) spoolNamed(ev *Event, n *node, to string) {
	if n != nil && n.kind == 'f' && a.spoolOf(to) != nil {
		a.spools[n] = ev.Line
	}
}

// unspooling checks the removal of the entry at p (node n), renamed to to
// ("" for an unlink): a spool may go only once a commit that applied it
// is durable.
func (a *auditor) unspooling(ev *Event, n *node, p, to string) {
	ds := a.spoolOf(p)
	if ds == nil || n == nil || n.kind != 'f' || (to != "" && a.spoolOf(to) == ds) {
		return
	}
	named := a.spools[n]
	if named > 0 && ds.committed < named {
		a.flag(ev, p, "", fmt.Sprintf("removes a spool (named at line %d) before a commit applies it: a power cut leaves a dataset that never got its input", named))
		return
	}
	if ds.committed == 0 {
		return // from before the trace, applied by an earlier run
	}
	if now, _, _ := a.fs.durable(ds.path + "/CURRENT"); now != a.fs.lookup(ds.path+"/CURRENT", false) {
		a.flag(ev, p, "", fmt.Sprintf("removes a spool before the commit that applies it (the rename of CURRENT at line %d) is durable: a power cut leaves the commit before it, without the spool's input", ds.committed))
	}
}

// keptAtExit checks, as the step exits with status, that every file it
// leaves in a dataset's inbox/ is durably there, under some name in
// inbox/, with durable data. A rename within inbox/ that is not durable
// yet loses nothing: the file is durably under its old name.
func (a *auditor) keptAtExit(ev *Event, status int) {
	for _, ds := range a.datasets {
		p := ds.path + "/inbox"
		now := a.fs.lookup(p, true)
		if now == nil || !asDir(now) {
			continue
		}
		held := map[*node]bool{}
		if d, _, _ := a.fs.durable(p); d != nil && asDir(d) {
			durableFiles(d, held)
		}
		a.keptIn(ev, status, now, p, held)
	}
}

// durableFiles adds to held the files a power cut leaves in dir's tree.
func durableFiles(dir *node, held map[*node]bool) {
	for _, c := range dir.dur {
		if c.kind == 'd' {
			durableFiles(c, held)
		} else {
			held[c] = true
		}
	}
}

// keptIn flags each file in dir's tree now (at path at) that a power cut
// would lose or cut: not in held, or with data not durable.
func (a *auditor) keptIn(ev *Event, status int, dir *node, at string, held map[*node]bool) {
	for _, name := range slices.Sorted(maps.Keys(dir.vol)) {
		n, p := dir.vol[name], at+"/"+name
		var why string
		switch {
		case n.kind == 'd':
			a.keptIn(ev, status, n, p, held)
			continue
		case n.kind != 'f':
			continue
		case n.wrote != 0:
			why = "its data is not durable: " + unsynced(n)
		case !held[n]:
			if d, _, w := a.fs.durable(p); d == nil {
				why = w // its entry, or a folder's on its path
			} else {
				why = missing(dir, name, at)
			}
		default:
			continue
		}
		a.flag(ev, p, "", fmt.Sprintf("exits %d leaving in the inbox what a stream sent (kept for the next run) not durably there: %s", status, why))
	}
}
