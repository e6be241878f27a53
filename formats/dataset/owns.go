package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/infohash/infohash/internal/exitcode"
)

// ownedEntries are the entries of a dataset directory that infohash
// manages: the commit pointer, the manifests, the tables, the inbox and
// staging folders, the lock, the policy and blocklist it reads, dedup's
// input cache, and capture's default --dht-state. Anything else under the
// directory (an export/ folder, notes) is the user's.
var ownedEntries = map[string]bool{
	"CURRENT": true, "LOCK": true, "manifests": true, "staging": true, "inbox": true,
	"policy.json": true, "blocklist": true, "dht-state": true, InputCacheFile: true,
	TableState: true, TableTorrents: true, TablePeers: true, TableLeases: true, TableLedger: true,
}

// Owns reports whether path names a file that the dataset in dir manages
// (or would create), so that writing it would damage the dataset: it
// returns the dataset-relative name, "." for dir itself. Both paths are
// resolved first (symbolic links, "..", a /dev/fd/N link), as the writer
// of path would follow them; a path that does not exist yet is resolved
// through its directory. Temporary files (fsutil's ".tmp-" names) at the
// top of dir count as owned too.
func Owns(dir, path string) (rel string, owned bool) {
	rel, ok := Contains(dir, path)
	if !ok || rel == "." {
		return rel, ok
	}
	first, _, _ := strings.Cut(rel, string(filepath.Separator))
	return rel, ownedEntries[first] || strings.HasPrefix(first, ".tmp-")
}

// Contains reports whether path lies in directory dir (or is dir, rel
// "."), both resolved as Owns resolves them, and returns path relative to
// dir.
func Contains(dir, path string) (rel string, ok bool) {
	root, err := resolve(dir)
	if err != nil {
		return "", false
	}
	p, err := resolve(path)
	if err != nil {
		return "", false
	}
	rel, err = filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// resolve is p absolute with every symbolic link followed; a missing last
// element (a file to be created) is resolved through its directory, and so
// on up (a missing directory is left as spelt).
func resolve(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	var tail []string
	for hops := 0; ; {
		r, err := filepath.EvalSymlinks(abs)
		if err == nil {
			return filepath.Join(append([]string{r}, tail...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		// A dangling symbolic link: follow it by hand once, as a writer
		// would create its target.
		if target, lerr := os.Readlink(abs); lerr == nil {
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(abs), target)
			}
			if hops++; hops <= 40 {
				abs = filepath.Clean(target)
				continue
			}
		}
		parent := filepath.Dir(abs)
		if parent == abs {
			return filepath.Join(append([]string{abs}, tail...)...), nil
		}
		tail = append([]string{filepath.Base(abs)}, tail...)
		abs = parent
	}
}

// Enclosing returns the dataset directory that path lies in (resolved as
// Owns resolves it): the nearest folder above it, or path itself, holding
// both a CURRENT file and a manifests/ folder. It lets a command that is
// given no --data (fetch, capture) still refuse to write over a dataset's
// own files.
func Enclosing(path string) (dir string, ok bool) {
	p, err := resolve(path)
	if err != nil {
		return "", false
	}
	for {
		if isDatasetDir(p) {
			return p, true
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", false
		}
		p = parent
	}
}

// isDatasetDir reports whether dir looks like a dataset: a CURRENT file
// and a manifests folder.
func isDatasetDir(dir string) bool {
	cur, err := os.Stat(filepath.Join(dir, "CURRENT"))
	if err != nil || !cur.Mode().IsRegular() {
		return false
	}
	m, err := os.Stat(filepath.Join(dir, "manifests"))
	return err == nil && m.IsDir()
}

// Nested returns the dataset that dir lies inside: the nearest folder
// above dir (not dir itself) that is a dataset as Enclosing tells one, dir
// resolved as Owns resolves it (symbolic links, ".."). A dataset made or
// written there would be wrecked by the outer one's runs, which take what
// is in their inbox/ and staging/ for their own. outer is spelt as dir
// spells it when dir names it by a plain path below it ("D" for
// "D/inbox"), else resolved.
func Nested(dir string) (outer string, ok bool) {
	p, err := resolve(dir)
	if err != nil {
		return "", false
	}
	for below, q := p, filepath.Dir(p); q != below; below, q = q, filepath.Dir(q) {
		if isDatasetDir(q) {
			return speltAs(dir, p, q), true
		}
	}
	return "", false
}

// speltAs is the folder outer, which dir (as given; p resolved) lies
// below, spelt as dir starts if it does (a prefix of dir that resolves to
// outer), else outer as resolved.
func speltAs(dir, p, outer string) string {
	rel, err := filepath.Rel(outer, p)
	if err != nil {
		return outer
	}
	prefix, ok := strings.CutSuffix(filepath.Clean(dir), string(filepath.Separator)+rel)
	if !ok || prefix == "" {
		return outer
	}
	if r, err := resolve(prefix); err != nil || r != outer {
		return outer
	}
	return prefix
}

// NestedError is the cause of the bad-input error for a folder (Dir, as
// given) that lies inside another dataset (Outer): a writer refuses it
// (Open, Use, Creatable).
type NestedError struct{ Dir, Outer string }

func (e *NestedError) Error() string {
	return fmt.Sprintf("%s: inside the dataset %s; choose a folder outside it", e.Dir, e.Outer)
}

// refuseNested is the bad-input error for a dir inside another dataset
// (Nested), nil for any other.
func refuseNested(dir string) error {
	if outer, ok := Nested(dir); ok {
		return exitcode.BadInput(fmt.Errorf("dataset: %w", &NestedError{Dir: dir, Outer: outer}))
	}
	return nil
}
