package fsaudit

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// node is a file, directory or symbolic link of the replayed file system.
type node struct {
	kind byte // 'f' file, 'd' directory, 'l' symbolic link
	fs   int  // the file system (mount) it is on

	// A directory's entries: vol as they are now, dur as a power cut
	// leaves them; pending are the changes of vol not yet in dur, oldest
	// first. complete: vol holds every entry (made in the trace, or
	// loaded from a copy); else an unknown name is taken for one that was
	// there, durable, before the trace began.
	parent   *node
	name     string
	vol, dur map[string]*node
	pending  []entryOp
	complete bool

	// A file's data: wrote is the line of its last write not yet synced
	// (0: none), by call wroteBy; synced the line of the last sync that
	// covered it (0: none in the trace).
	wrote   int
	wroteBy string
	synced  int
	// content is the file's bytes now, when known; dcontent what a power
	// cut leaves, when dknown. before is its copy under -before, read for
	// dcontent when needed.
	content  []byte
	known    bool
	dcontent []byte
	dknown   bool
	before   string
	target   string // a symbolic link's
	// guessed: a name from before the trace that no copy describes, taken
	// for a file until it is used as a folder.
	guessed bool
}

// entryOp is a change to a directory's entries: name now names n (nil:
// removed), by call at line.
type entryOp struct {
	line int
	call string
	name string
	n    *node
}

// maxContent bounds the bytes kept of a file's content: CURRENT and
// manifests are far smaller; data files need none.
const maxContent = 64 << 20

// fsys is the replayed file system: what it holds now and what a power
// cut would leave of it.
type fsys struct {
	root   *node
	mounts map[string]int // mount point -> file system number
	dirty  map[*node]bool // files with unsynced data
	dirs   map[*node]bool // directories with pending entries
}

func newFS(mounts []string) *fsys {
	f := &fsys{mounts: map[string]int{}, dirty: map[*node]bool{}, dirs: map[*node]bool{}}
	for i, m := range mounts {
		f.mounts[path.Clean(m)] = i + 1
	}
	f.root = &node{kind: 'd', vol: map[string]*node{}, dur: map[string]*node{}}
	f.root.parent = f.root
	return f
}

func newDir(complete bool) *node {
	return &node{kind: 'd', vol: map[string]*node{}, dur: map[string]*node{}, complete: complete}
}

// pathOf is n's path now (a directory's).
func (n *node) pathOf() string {
	var parts []string
	for d := n; d.parent != d && d.parent != nil && len(parts) < 4096; d = d.parent {
		parts = append(parts, d.name)
	}
	var b strings.Builder
	for i := len(parts) - 1; i >= 0; i-- {
		b.WriteString("/" + parts[i])
	}
	if b.Len() == 0 {
		return "/"
	}
	return b.String()
}

// child returns dir's entry name now, taking a name an incomplete
// directory does not know for one that was there before the trace.
func (f *fsys) child(dir *node, name string, kind byte) *node {
	if c, ok := dir.vol[name]; ok {
		return c
	}
	if dir.complete {
		return nil
	}
	if _, ok := dir.dur[name]; ok {
		return nil // removed, not yet durably
	}
	c := &node{kind: kind, fs: dir.fs}
	if kind == 'd' {
		c = newDir(false)
		c.fs = dir.fs
	}
	c.guessed = true
	c.parent, c.name = dir, name
	if id, ok := f.mounts[path.Join(dir.pathOf(), name)]; ok {
		c.fs = id
	}
	dir.vol[name], dir.dur[name] = c, c
	return c
}

// asDir makes n a folder if it is one of unknown kind; it reports
// whether n is a folder.
func asDir(n *node) bool {
	if n.kind != 'd' && n.guessed && n.wrote == 0 && !n.known {
		n.kind, n.vol, n.dur = 'd', map[string]*node{}, map[string]*node{}
	}
	return n.kind == 'd'
}

// lookup finds the node at the absolute path p now, following symbolic
// links (the last one too if follow is set); nil if there is none.
func (f *fsys) lookup(p string, follow bool) *node {
	return f.walk(p, follow, 'f', 0)
}

// walk is lookup; an unknown last name of an incomplete directory is
// taken for one of kind lastKind.
func (f *fsys) walk(p string, follow bool, lastKind byte, depth int) *node {
	if depth > 40 || !strings.HasPrefix(p, "/") {
		return nil
	}
	cur := f.root
	parts := strings.Split(strings.TrimPrefix(path.Clean(p), "/"), "/")
	for i, name := range parts {
		if name == "" {
			continue
		}
		if !asDir(cur) {
			return nil
		}
		last := i == len(parts)-1
		kind := byte('d')
		if last {
			kind = lastKind
		}
		c := f.child(cur, name, kind)
		if c == nil {
			return nil
		}
		if c.kind == 'l' && (!last || follow) {
			t := c.target
			if !strings.HasPrefix(t, "/") {
				t = path.Join(cur.pathOf(), t)
			}
			if c = f.walk(t, true, kind, depth+1); c == nil {
				return nil
			}
		}
		cur = c
	}
	return cur
}

// parentOf is the directory that holds the absolute path p, and p's last
// name.
func (f *fsys) parentOf(p string) (*node, string) {
	p = path.Clean(p)
	dir, base := path.Split(p)
	d := f.walk(dir, true, 'd', 0)
	if d == nil || !asDir(d) || base == "" {
		return nil, ""
	}
	return d, base
}

// setEntry makes dir's entry name n (nil: removes it) now, pending until
// a sync of dir.
func (f *fsys) setEntry(dir *node, name string, n *node, line int, call string) {
	if n == nil {
		delete(dir.vol, name)
	} else {
		dir.vol[name] = n
		if n.kind == 'd' {
			n.parent, n.name = dir, name
		}
	}
	dir.pending = append(dir.pending, entryOp{line: line, call: call, name: name, n: n})
	f.dirs[dir] = true
}

// within reports whether d is n or inside it (a rename of n into d would
// make a loop, which the kernel refuses).
func within(d, n *node) bool {
	for i := 0; i < 4096 && d != nil; i++ {
		if d == n {
			return true
		}
		if d.parent == d {
			return false
		}
		d = d.parent
	}
	return false
}

// syncDir makes durable the changes to dir's entries made before line.
func (f *fsys) syncDir(dir *node, before int) {
	keep := dir.pending[:0]
	for _, op := range dir.pending {
		if op.line >= before {
			keep = append(keep, op)
			continue
		}
		if op.n == nil {
			delete(dir.dur, op.name)
		} else {
			dir.dur[op.name] = op.n
		}
	}
	dir.pending = keep
	if len(keep) == 0 {
		delete(f.dirs, dir)
	}
}

// syncData makes n's data durable if it was last written before line
// (the line a sync started on), at the sync's line.
func (f *fsys) syncData(n *node, before, line int) {
	if n.wrote == 0 || n.wrote >= before {
		return
	}
	n.dcontent, n.dknown = n.content, n.known
	n.wrote, n.synced, n.before = 0, line, ""
	delete(f.dirty, n)
}

// syncFS makes durable all that was written and changed on file system
// fs before line (fs < 0: every file system, sync(2)).
func (f *fsys) syncFS(fs, before, line int) {
	for n := range f.dirty {
		if fs < 0 || n.fs == fs {
			f.syncData(n, before, line)
		}
	}
	for d := range f.dirs {
		if fs < 0 || d.fs == fs {
			f.syncDir(d, before)
		}
	}
}

// wrote records a change of n's data at line by call.
func (f *fsys) wrote(n *node, line int, call string) {
	if n.kind != 'f' {
		return
	}
	n.wrote, n.wroteBy = line, call
	f.dirty[n] = true
}

// entryKey names an entry: a directory and a name in it.
type entryKey struct {
	dir  *node
	name string
}

// durable finds the node a power cut leaves at the absolute path p, and
// the entries that lead to it; when there is none, why says which entry
// is missing and what made it.
func (f *fsys) durable(p string) (n *node, chain []entryKey, why string) {
	return f.durableAt(p, 0)
}

func (f *fsys) durableAt(p string, depth int) (n *node, chain []entryKey, why string) {
	cur, at := f.root, ""
	if depth > 40 {
		return nil, nil, p + ": too many symbolic links"
	}
	parts := strings.Split(strings.TrimPrefix(path.Clean(p), "/"), "/")
	for i, name := range parts {
		if name == "" {
			continue
		}
		if !asDir(cur) {
			return nil, nil, at + " is not a directory"
		}
		kind := byte('d')
		if i == len(parts)-1 {
			kind = 'f'
		}
		f.child(cur, name, kind) // an unknown name of an incomplete directory was there before
		c, ok := cur.dur[name]
		if !ok {
			return nil, nil, missing(cur, name, at)
		}
		chain = append(chain, entryKey{cur, name})
		if c.kind == 'l' {
			t := c.target
			if !strings.HasPrefix(t, "/") {
				t = path.Join(at+"/", t)
			}
			var more []entryKey
			if c, more, why = f.durableAt(t, depth+1); c == nil {
				return nil, nil, why
			}
			chain = append(chain, more...)
		}
		at += "/" + name
		cur = c
	}
	return cur, chain, ""
}

// missing says why dir (at path at) durably lacks name.
func missing(dir *node, name, at string) string {
	if dir == nil {
		return at + " is not a folder"
	}
	for i := len(dir.pending) - 1; i >= 0; i-- {
		if op := dir.pending[i]; op.name == name && op.n != nil {
			return fmt.Sprintf("its entry %s in %s (%s at line %d) is not durable: no fsync of %s nor syncfs since", name, at, op.call, op.line, at)
		}
	}
	return fmt.Sprintf("%s/%s does not exist", at, name)
}

// load makes the tree at the absolute path p (which the trace sees) the
// one in the folder copy, as it was before the trace: durable, complete.
func (f *fsys) load(p, copy string) error {
	dir, base := f.parentOf(p)
	if dir == nil {
		return fmt.Errorf("fsaudit: -before %s: its parent folder is not a folder", p)
	}
	n, err := loadTree(copy, dir.fs)
	if err != nil {
		return err
	}
	if n.kind == 'd' {
		n.parent, n.name = dir, base
	}
	dir.vol[base], dir.dur[base] = n, n
	return nil
}

func loadTree(p string, fs int) (*node, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, fmt.Errorf("fsaudit: -before: %w", err)
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		t, err := os.Readlink(p)
		if err != nil {
			return nil, fmt.Errorf("fsaudit: -before: %w", err)
		}
		return &node{kind: 'l', fs: fs, target: t}, nil
	case fi.IsDir():
		d := newDir(true)
		d.fs = fs
		ents, err := os.ReadDir(p)
		if err != nil {
			return nil, fmt.Errorf("fsaudit: -before: %w", err)
		}
		for _, e := range ents {
			c, err := loadTree(filepath.Join(p, e.Name()), fs)
			if err != nil {
				return nil, err
			}
			if c.kind == 'd' {
				c.parent, c.name = d, e.Name()
			}
			d.vol[e.Name()], d.dur[e.Name()] = c, c
		}
		return d, nil
	}
	return &node{kind: 'f', fs: fs, before: p}, nil
}

// durableContent is what a power cut leaves in file n, if known.
func (n *node) durableContent() ([]byte, bool) {
	if !n.dknown && n.before != "" && n.wrote == 0 {
		if b, err := os.ReadFile(n.before); err == nil && len(b) <= maxContent {
			n.dcontent, n.dknown = b, true
		}
	}
	return n.dcontent, n.dknown
}
