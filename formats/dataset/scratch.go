package dataset

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/infohash/infohash/formats/fsutil"
)

// Scratch is a writer's private folder under DIR/staging for files that
// outlive one transaction but not the run: merge spills the metadata it
// reads there and keeps it across commit retries. Like a transaction's
// staging folder it holds a shared flock on its .owner file while the
// process lives, so that whatever a run killed at any instant leaves
// there is removed by the next writer's Open (cleanStaging), never
// published.
type Scratch struct {
	Dir   string
	owner *os.File
}

// NewScratch makes a scratch folder in d.
func (d *Dataset) NewScratch() (*Scratch, error) {
	if d.readOnly {
		return nil, fmt.Errorf("dataset: %s: %w", d.Dir, errReadOnly)
	}
	dir, owner, err := d.ownedDir()
	if err != nil {
		return nil, err
	}
	return &Scratch{Dir: dir, owner: owner}, nil
}

// Remove deletes the folder and everything in it.
func (s *Scratch) Remove() {
	if s.owner != nil {
		s.owner.Close()
		s.owner = nil
	}
	os.RemoveAll(s.Dir)
}

// bornOwned ends the name of a staging folder ownedDir made: it comes
// into place (a rename) with its .owner file already made and locked, so
// such a folder whose .owner no process holds is a dead writer's however
// new it is. Other names (folders of earlier versions, or one being set
// up under a temporary name) may belong to a writer setting it up now.
const bornOwned = "-o"

// flockShared takes a shared flock on f (a variable for tests).
var flockShared = func(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_SH) }

// ownedDir makes a new folder under DIR/staging and takes a shared flock
// on its .owner file, which tells cleanStaging that its writer lives. The
// folder is set up under a temporary name (fsutil.TempPrefix) and renamed
// into place locked: cleanStaging can then remove what a writer killed a
// moment ago left, with no wait for a folder to age.
func (d *Dataset) ownedDir() (string, *os.File, error) {
	id := make([]byte, 6)
	rand.Read(id)
	name := fmt.Sprintf("%d-%s", os.Getpid(), hex.EncodeToString(id))
	tmp := filepath.Join(d.Dir, "staging", fsutil.TempPrefix+name)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return "", nil, d.notWritable(filepath.Dir(tmp), fmt.Errorf("dataset: %w", err))
	}
	owner, err := os.Create(filepath.Join(tmp, ".owner"))
	if err != nil {
		os.RemoveAll(tmp)
		return "", nil, d.notWritable(tmp, fmt.Errorf("dataset: %w", err))
	}
	suffix := bornOwned
	if flockShared(owner) != nil {
		// No lock tells this folder from a dead writer's (ENOLCK: an NFS
		// mount without its lock daemon): named as an earlier version's,
		// cleanStaging leaves it until it is a minute old.
		suffix = ""
	}
	dir := filepath.Join(d.Dir, "staging", name+suffix)
	if err := os.Rename(tmp, dir); err != nil {
		owner.Close()
		os.RemoveAll(tmp)
		return "", nil, fmt.Errorf("dataset: %w", err)
	}
	return dir, owner, nil
}
