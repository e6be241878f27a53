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
	t, err := resolveOutput(path)
	if err != nil || t.kind == outDirect {
		return nil
	}
	dir, base := filepath.Split(t.path)
	if dir == "" {
		dir = "."
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
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
