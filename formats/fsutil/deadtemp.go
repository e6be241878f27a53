package fsutil

import (
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// DeadTemp is a temporary file of an output that a killed writer left,
// claimed by ClaimDeadTemps: this process holds it until Remove or
// Release.
type DeadTemp struct {
	Name string   // its path
	lock *os.File // holds an exclusive flock(2) on it
}

// ClaimDeadTemps finds the temporary files that killed writers of output
// path left and claims them. It takes only the files CreateOutput created
// locked before naming them (TempPrefix+base+"-L" and 12 hex digits,
// beside the file path leads to), which a live writer holds from before
// their name exists until after it is gone: one that no writer holds is
// always a dead writer's. Each is claimed with an exclusive flock(2),
// which keeps CreateOutput's sweep, and other claimers, off it until
// Remove or Release. A writer that can use what its killed predecessor
// left (plan-retries: the jobs of leases it committed but never
// published) claims it before it opens path, which would sweep it away.
// Nothing is claimed for an output written in place (no temporary file).
// Errors are ignored: what cannot be claimed is left to the sweep.
func ClaimDeadTemps(path string) []*DeadTemp {
	dir, base, ents := outputFolder(path)
	prefix := TempPrefix + base + "-" + lockedMark
	var out []*DeadTemp
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(name, prefix) || !isRandomHex(name[len(prefix):]) {
			continue
		}
		if d := claimDead(filepath.Join(dir, name)); d != nil {
			out = append(out, d)
		}
	}
	return out
}

// outputFolder is the folder of output path (as resolveOutput resolves
// it), its base name, and the folder's entries, where its temporary files
// would be; no entries for an output written in place (no temporary file)
// or a folder that cannot be read.
func outputFolder(path string) (dir, base string, ents []os.DirEntry) {
	t, err := resolveOutput(path)
	if err != nil || t.kind == outDirect {
		return "", "", nil
	}
	dir, base = filepath.Split(t.path)
	if dir == "" {
		dir = "."
	}
	ents, _ = os.ReadDir(dir)
	return dir, base, ents
}

// HeldTemps returns the paths of the temporary files of output path that
// some process holds: those of writers at work on path (CreateOutput's,
// held from before their name exists until after it is gone, or locked
// just after it where there is no O_TMPFILE) and those ClaimDeadTemps
// claimed. A run that must not write over what another run is writing
// to path (plan-retries -o FILE: the other's jobs may be leased already)
// reads them. None for an output written in place; errors are ignored.
func HeldTemps(path string) []string {
	dir, base, ents := outputFolder(path)
	prefix := TempPrefix + base + "-"
	var out []string
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.Type().IsRegular() || !isRandomHex(strings.TrimPrefix(rest, lockedMark)) {
			continue
		}
		if p := filepath.Join(dir, e.Name()); held(p) {
			out = append(out, p)
		}
	}
	return out
}

// held reports whether a process holds a flock(2) on the file at p (false
// if it is gone).
func held(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil
}

// claimDead locks the file at p for good unless a live writer holds it,
// and checks that p still names the file locked: a writer that was
// holding it has renamed it into place before it let go.
func claimDead(p string) *DeadTemp {
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	var held, named unix.Stat_t
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil ||
		unix.Fstat(int(f.Fd()), &held) != nil || unix.Stat(p, &named) != nil ||
		held.Dev != named.Dev || held.Ino != named.Ino {
		f.Close()
		return nil
	}
	return &DeadTemp{Name: p, lock: f}
}

// Remove removes the file and lets go of it.
func (d *DeadTemp) Remove() {
	os.Remove(d.Name)
	d.Release()
}

// Release lets go of the file, leaving it: the next claimer, or a sweep,
// finds it again.
func (d *DeadTemp) Release() {
	if d.lock != nil {
		d.lock.Close()
		d.lock = nil
	}
}
