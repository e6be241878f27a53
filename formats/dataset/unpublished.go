// What commits built for snapshots that CURRENT never came to name.

package dataset

import (
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/infohash/infohash/formats/fsutil"
)

// snapshotTables are the tables a snapshot may hold a directory of.
var snapshotTables = []string{TableState, TableTorrents, TablePeers, TableLeases, TableLedger}

// numbered is a manifest or a table directory of one snapshot.
type numbered struct {
	rel  string // relative to DIR
	snap int64
}

// above lists the manifests and table directories of d numbered above
// snapshot snap, manifests first.
func (d *Dataset) above(snap int64) []numbered {
	var out []numbered
	ents, _ := os.ReadDir(d.Path("manifests"))
	for _, e := range ents {
		num, ok := strings.CutSuffix(e.Name(), ".json")
		if n, isNum := snapshotNumber(num); ok && isNum && n > snap {
			out = append(out, numbered{filepath.Join("manifests", e.Name()), n})
		}
	}
	for _, t := range snapshotTables {
		vs, _ := os.ReadDir(d.Path(t, "v"))
		for _, v := range vs {
			if n, ok := snapshotNumber(v.Name()); ok && n > snap {
				out = append(out, numbered{filepath.Join(t, "v", v.Name()), n})
			}
		}
	}
	return out
}

// snapshotNumber parses a manifest's or snapshot directory's number:
// digits only (manifestName's), no sign, nothing that overflows.
func snapshotNumber(s string) (int64, bool) {
	if s == "" || len(s) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// dropUnpublished removes the manifests and table directories numbered
// above base while CURRENT names snapshot base, and returns what it
// removed. The caller holds the writer lock. A writer builds snapshot
// N+1 only under the lock, after checking that CURRENT still names its
// base N (Commit), and publishes it by renaming CURRENT onto it before it
// lets go; so what is numbered above CURRENT's snapshot, seen under the
// lock, is no live writer's: a commit failed before its commit point, or
// its writer was killed there. Left, it holds a snapshot's worth of
// space that the next commit, on a full disk, needs. CURRENT is read
// again here: if it names another manifest (this commit got past its
// commit point) or cannot be read, nothing is removed. Removal is best
// effort: what cannot be removed is logged and left for the next writer.
func (d *Dataset) dropUnpublished(base int64) []string {
	name, _, err := readPointer(d.Path("CURRENT"))
	if err != nil || name != manifestName(base) {
		return nil
	}
	var removed []string
	for _, n := range d.above(base) {
		// A commit writes a manifest as a regular file: a FIFO, folder or
		// link at its name is none of its, and is left for the commit
		// that would write there to refuse (fsutil.NotRegularError).
		if strings.HasPrefix(n.rel, "manifests"+string(filepath.Separator)) && fsutil.Irregular(d.Path(n.rel)) != "" {
			continue
		}
		if err := os.RemoveAll(d.Path(n.rel)); err != nil {
			slog.Warn("dataset: could not remove what a commit built for a snapshot it never published; the next writer tries again",
				"dir", d.Dir, "path", n.rel, "err", err)
			continue
		}
		removed = append(removed, n.rel)
	}
	return removed
}

// Unpublished is what commits built for snapshots that CURRENT does not
// name, as a reader sees it.
type Unpublished struct {
	// Paths are the manifests and table directories numbered above the
	// latest snapshot.
	Paths []string
	// Bytes are what they alone hold, freed when they go: a snapshot
	// directory's unchanged files are hard links to an older snapshot's.
	Bytes int64
}

// Unpublished lists the manifests and table directories numbered above
// snapshot m, which the caller read as the latest, for a reader that
// takes no lock (status): it cannot tell what a commit that failed or
// was killed left from what a writer is building at this moment. The
// next writer to open the dataset removes the former (maintain). If
// CURRENT moved on meanwhile, what it names now, and older, is left out.
func (d *Dataset) Unpublished(m *Manifest) Unpublished {
	found := d.above(m.Snapshot)
	latest := m.Snapshot
	if name, _, err := readPointer(d.Path("CURRENT")); err == nil {
		if n, ok := snapshotNumber(strings.TrimSuffix(name, ".json")); ok && n > latest {
			latest = n
		}
	}
	var u Unpublished
	for _, n := range found {
		if n.snap <= latest {
			continue
		}
		p := d.Path(n.rel)
		u.Paths = append(u.Paths, p)
		u.Bytes += ownBytes(p)
	}
	return u
}

// ownBytes is the size of the regular files under p that no other name
// links to (a file hard-linked into a snapshot as well counts for
// nothing: removing p would not free it).
func ownBytes(p string) int64 {
	var n int64
	_ = filepath.WalkDir(p, func(_ string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return nil
		}
		if fi, err := e.Info(); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Nlink <= 1 {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
