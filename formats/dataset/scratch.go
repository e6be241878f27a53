package dataset

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
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

// ownedDir makes a new folder under DIR/staging and takes a shared flock
// on its .owner file, which tells cleanStaging that its writer lives.
func (d *Dataset) ownedDir() (string, *os.File, error) {
	id := make([]byte, 6)
	rand.Read(id)
	dir := filepath.Join(d.Dir, "staging", fmt.Sprintf("%d-%s", os.Getpid(), hex.EncodeToString(id)))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, fmt.Errorf("dataset: %w", err)
	}
	owner, err := os.Create(filepath.Join(dir, ".owner"))
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("dataset: %w", err)
	}
	syscall.Flock(int(owner.Fd()), syscall.LOCK_SH)
	return dir, owner, nil
}
