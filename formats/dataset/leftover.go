package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/infohash/infohash/formats/fsutil"
)

// ClaimLeftover takes, without waiting, the lock of the whole spool at
// path that a run found in an inbox folder and would apply as a leftover.
// A spool's lock is held by the run that spooled it from its creation
// until that run has committed it or given it up (StartSpool,
// SpoolHeld), and by a run applying it as a leftover until it is done: ok
// is false, with no error, when another live process holds it, or when
// the file is no longer at path (applied and removed meanwhile). When ok,
// the caller holds the lock, keeps it while it applies the spool (so that
// no other run applies it at the same time), removes the spool once its
// commit is durable, and only then calls release.
//
// Only a regular file is claimed (fsutil.OpenRegular): anything else put
// at path since the caller listed it (IsSpool) is refused with a
// fsutil.NotRegularError, not opened, which a FIFO would block for good.
func ClaimLeftover(path string) (release func(), ok bool, err error) {
	f, err := fsutil.OpenRegular(path, os.O_RDONLY, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, false, nil
		}
		return nil, false, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, false, nil // its writer, or a run applying it, lives
		}
		return nil, false, fmt.Errorf("%s: lock: %w", path, err)
	}
	// The holder may have removed it (applied) between the open and the
	// lock, or set it aside: only the file still at path is a leftover.
	if !samePath(f, path) {
		f.Close()
		return nil, false, nil
	}
	return func() { f.Close() }, true, nil
}

// IsSpool reports whether the inbox entry e is a whole spool that a run
// wrote (SpoolHeld, StartSpool: a regular file NewName(ext) names,
// "part-….spool" in dedup's DIR/inbox, "part-….results" in merge's
// DIR/inbox/merge), the only kind a later run takes as a leftover and
// applies. Anything else there is left alone: a folder, a file set aside
// (partial-*, *.bad), a spool being written (.tmp-*), or what was never
// a run's, such as a dataset made in DIR/inbox by an older version (its
// CURRENT, LOCK, policy.json), which runs took for bad input and set
// aside, three runs in a row.
func IsSpool(e fs.DirEntry, ext string) bool {
	name := e.Name()
	return e.Type().IsRegular() && len(name) > len(spoolPrefix)+len(ext) &&
		strings.HasPrefix(name, spoolPrefix) && strings.HasSuffix(name, ext)
}

// spoolPrefix starts the name of every spool (NewName's).
const spoolPrefix = "part-"
