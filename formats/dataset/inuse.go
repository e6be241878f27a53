package dataset

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Open and OpenReadOnly take a shared flock on the dataset directory
// itself and hold it until Close: it says "a run is in here", which
// nothing on disk says while a run is between Open and its first Begin,
// waits for the writer lock to create the dataset, or only reads. RemoveUnused removes a dataset only
// if it gets an exclusive flock on the directory at once, so never one
// that another run has open. The kernel drops the flock when its holder
// dies, as it does the writer lock's.

// useRetries bounds how often useDir opens dir anew after finding that
// the folder it locked was removed (by a run removing the dataset it
// created) before the flock.
const useRetries = 10

// useDir opens dir, making it first if create is set (MakeDir), and takes
// a shared flock on it. It returns a nil file and no error when dir does
// not exist and create is off. A dir inside another dataset is refused
// (bad input), whether or not it holds a dataset: the writers that use
// it would lose what they put there to the outer dataset's runs.
func useDir(dir string, create bool) (*os.File, error) {
	if err := refuseNested(dir); err != nil {
		return nil, err
	}
	for try := 1; ; try++ {
		if create {
			if err := MakeDir(dir); err != nil {
				return nil, err
			}
		}
		f, err := os.Open(dir)
		switch {
		case (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)) && !create:
			return nil, nil
		case errors.Is(err, fs.ErrNotExist) && try < useRetries:
			continue // removed since MakeDir: make it again
		case err != nil:
			return nil, fmt.Errorf("dataset: %w", err)
		}
		if err := flockRetry(f, syscall.LOCK_SH); err != nil {
			f.Close()
			return nil, fmt.Errorf("dataset: %s: flock: %w", dir, err)
		}
		if samePath(f, dir) {
			return f, nil
		}
		f.Close()
		if !create {
			return nil, nil // removed: there is no dataset there now
		}
		if try == useRetries {
			return nil, fmt.Errorf("dataset: %s: the folder was removed %d times while being opened", dir, useRetries)
		}
	}
}

// Use makes dir if it is missing (MakeDir) and marks it in use, as Open
// does, until the returned Closer is closed: no other run's RemoveUnused
// removes it meanwhile. It is for what a writer puts in DIR before it
// opens the dataset (the default policy.json).
func Use(dir string) (io.Closer, error) {
	f, err := useDir(dir, true)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// flockRetry is flock(2) retried when a signal interrupts it.
func flockRetry(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// Close ends the run's use of d: a dataset it created and committed
// nothing to may then be removed (RemoveUnused). A Dataset that is never
// closed keeps its directory in use until it is garbage-collected or the
// process exits. Close may be called more than once.
func (d *Dataset) Close() error {
	if d == nil || d.use == nil {
		return nil
	}
	err := d.use.Close()
	d.use = nil
	return err
}

// claimUnused takes an exclusive flock on dir at once, which it gets only
// if no Dataset (in this process or another) has dir open, and checks
// that dir is still the folder it opened. It returns nil, and no error,
// when another run has dir open.
func claimUnused(dir string) (*os.File, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil && samePath(f, dir) {
		return f, nil
	}
	f.Close()
	if err == nil || errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, nil
	}
	return nil, fmt.Errorf("dataset: %s: flock: %w", dir, err)
}
