package dataset

import (
	"errors"
	"io"

	"github.com/infohash/infohash/formats/fsutil"
)

// FinishInBackground lets WriteStagedWith and the functions built on it
// return as soon as a staged file's bytes are handed to the disk: the
// file's last writes and its close finish in the background (an apply
// worker waited on each file's last O_DIRECT buffers and tail, ~10% of
// an incremental dedup's apply phase), with at most limit files of tx
// unfinished at a time (each holds the fsutil.UncachedBuffer buffers it
// has yet to write: up to four). The size,
// checksum and footer checksum they return are exact all the same. A
// write that fails in the background fails WaitStaged, and Commit, which
// waits for every file before it publishes anything.
func (tx *Tx) FinishInBackground(limit int) {
	tx.bgMu.Lock()
	defer tx.bgMu.Unlock()
	if tx.bgSlots == nil {
		tx.bgSlots = make(chan struct{}, max(limit, 1))
	}
}

// WaitStaged waits until every staged file of tx is written and closed,
// and returns the first error of those finished in the background (as
// the caller of the WriteStagedWith that staged it would have seen it).
func (tx *Tx) WaitStaged() error {
	tx.bgWG.Wait()
	tx.bgMu.Lock()
	defer tx.bgMu.Unlock()
	return tx.bgErr
}

// finishInForeground waits for the files finished in the background
// (WaitStaged) and has the next ones finished before WriteStagedWith
// returns.
func (tx *Tx) finishInForeground() error {
	tx.bgMu.Lock()
	tx.bgSlots = nil
	tx.bgMu.Unlock()
	return tx.WaitStaged()
}

// finishLater closes f in the background if tx lets it (it waits for a
// free slot first), and reports whether it did; wrap(err) is recorded for
// WaitStaged if the file's writes or close fail.
func (tx *Tx) finishLater(f *fsutil.Uncached, wrap func(error) error) bool {
	tx.bgMu.Lock()
	slots := tx.bgSlots
	tx.bgMu.Unlock()
	if slots == nil {
		return false
	}
	slots <- struct{}{}
	tx.bgWG.Add(1)
	f.CloseLater(func(err error) {
		if err != nil {
			tx.bgMu.Lock()
			if tx.bgErr == nil {
				tx.bgErr = wrap(err)
			}
			tx.bgMu.Unlock()
		}
		<-slots
		tx.bgWG.Done()
	})
	return true
}

// tailReader reads a staged file's last bytes from its writer's buffers
// (fsutil.Uncached.TailAt); missed is set if some were no longer there.
type tailReader struct {
	f      *fsutil.Uncached
	missed bool
}

var errNotInMemory = errors.New("not in memory")

func (t *tailReader) ReadAt(p []byte, off int64) (int, error) {
	if !t.f.TailAt(p, off) {
		t.missed = true
		return 0, errNotInMemory
	}
	return len(p), nil
}

var _ io.ReaderAt = (*tailReader)(nil)
