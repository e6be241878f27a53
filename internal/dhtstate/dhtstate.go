// Package dhtstate keeps what a DHT node learnt between runs: the small
// JSON files in which capture and fetch save node IDs and contacts, read
// and written whole (atomically and durably), and the flock(2) that keeps
// two runs from using one directory's node IDs at once.
//
// A state file is a cache: an entry that does not parse is skipped, and a
// caller that cannot use a file at all starts cold instead of failing.
package dhtstate

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"os"
	"syscall"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/internal/exitcode"
)

// FetchFile is the file in which fetch keeps its node ID (and contacts) in
// its --dht-state directory, FetchKind its "kind". capture, on the same
// directory, reads the ID so as not to record fetch's own lookups.
const (
	FetchFile = "fetch-dht.json"
	FetchKind = "infohash fetch DHT state"
)

// Contact is a DHT node: its ID and UDP address.
type Contact struct {
	ID   [20]byte
	Addr netip.AddrPort
}

// Entry is a Contact as a state file holds it.
type Entry struct {
	ID   string `json:"id"`   // 40 hex digits
	Addr string `json:"addr"` // ip:port
}

// Entries encodes cs for a state file.
func Entries(cs []Contact) []Entry {
	out := make([]Entry, 0, len(cs))
	for _, c := range cs {
		out = append(out, Entry{ID: hex.EncodeToString(c.ID[:]), Addr: c.Addr.String()})
	}
	return out
}

// Contacts decodes the entries with a node ID of 40 hex digits and an
// address with a port that keep accepts (nil: any), at most limit of them
// (0: no limit). The others are skipped.
func Contacts(es []Entry, keep func(netip.AddrPort) bool, limit int) []Contact {
	var out []Contact
	for _, e := range es {
		if limit > 0 && len(out) == limit {
			break
		}
		id, ok := ParseID(e.ID)
		ap, err := netip.ParseAddrPort(e.Addr)
		if !ok || err != nil || ap.Port() == 0 || (keep != nil && !keep(ap)) {
			continue
		}
		out = append(out, Contact{ID: id, Addr: ap})
	}
	return out
}

// ParseID parses a node ID written as 40 hex digits.
func ParseID(s string) ([20]byte, bool) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 20 {
		return [20]byte{}, false
	}
	return [20]byte(b), true
}

// maxStateFile bounds a state file: ours hold a few hundred contacts
// (tens of KiB).
const maxStateFile = 16 << 20

// Load reads the JSON file path into v. A missing file is not an error
// (found is false); any other failure names path. Only a regular file of
// at most maxStateFile bytes is read: a FIFO put there would block the
// run, a huge file fill its memory.
func Load(path string, v any) (found bool, err error) {
	// Checked on the open file (a link is followed, as it was): a FIFO
	// put there between a look at the path and its open would block.
	f, err := fsutil.OpenRegularTarget(path, os.O_RDONLY, 0)
	var nr *fsutil.NotRegularError
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if errors.As(err, &nr) {
		return false, fmt.Errorf("%s: not a regular file (%s)", path, nr.Kind)
	} else if err != nil {
		return false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return false, err
	}
	if st.Size() > maxStateFile {
		return false, fmt.Errorf("%s: %d bytes, more than a state file holds (%d)", path, st.Size(), maxStateFile)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxStateFile))
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("%s: not JSON: %w", path, err)
	}
	return true, nil
}

// Save writes v to path as indented JSON, atomically and durably, as
// fsutil.WriteOutput writes a file: through a symbolic link to its
// target, the link kept. What is not a regular file (a device, a FIFO, a
// directory, or a link to one), which Load does not read, is neither
// written nor replaced: an error says so.
func Save(path string, v any) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file (%s): not replaced; move it aside", path, fi.Mode().Type())
	}
	return fsutil.WriteOutput(path, append(b, '\n'))
}

// Lock takes directory dir (made if missing) for this run of cmd, by the
// flock(2) of its file name: two runs sharing one state would run the
// same node IDs at once, which other nodes see as one node flapping
// between addresses, and the last to stop would overwrite the other's
// contacts. A second run is refused with the locked exit status; a dir
// that is a file, or that the run may not write to (permissions, a
// read-only file system), is a usage error naming --dht-state dir. The kernel drops the lock when the
// process dies, so a killed run never leaves it behind.
func Lock(dir, name, cmd string) (release func(), err error) {
	release, err = fsutil.TryLockDir(dir, name)
	var held *fsutil.HeldError
	switch {
	case errors.As(err, &held):
		return nil, exitcode.With(exitcode.Locked, fmt.Errorf(
			"%s: --dht-state %s is in use by another %s (%s); give each %s running at once its own --dht-state", cmd, dir, cmd, held.Holder, cmd))
	case errors.Is(err, fsutil.ErrNotDir):
		return nil, exitcode.BadInput(fmt.Errorf("%s: --dht-state %w", cmd, err))
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		// A folder the run may not write to (its mode, a read-only
		// mount) is the flag's fault, as a file there is: the run
		// cannot keep its node IDs and contacts there.
		return nil, exitcode.BadInput(fmt.Errorf("%s: --dht-state %s: cannot write there: %w", cmd, dir, err))
	case err != nil:
		return nil, fmt.Errorf("%s: --dht-state: %w", cmd, err)
	}
	return release, nil
}
