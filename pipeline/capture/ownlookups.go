package capture

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/dhtstate"
)

// A fetch sharing capture's --dht-state directory looks hashes up with
// get_peers, and capture's nodes may be among those it asks: recorded,
// such a query would be a fresh sighting of a hash the crawler just
// failed to fetch, and dedup would reactivate the hash on evidence the
// crawler made itself. fetch saves its node ID there before its node
// sends anything (dhtstate.FetchFile). The nodes leave out the get_peers
// and announce_peer whose sender has that ID before the recent set and
// the per-hash cap see them (own), so that a fetch's lookups neither use
// up a hash's cap nor fill the recent set; they read the file again at
// most every fetchIDsCheck. The writer reads it before each batch and
// leaves out what the nodes let through (drop): the queries of a fetch
// that saved a new ID since the nodes last looked.
// maxFetchIDs bounds the fetch node IDs remembered in a run: a fetch
// keeps its ID from run to run, so a new one is rare (a state file lost
// or replaced); an old one's queries may still be on their way.
const maxFetchIDs = 8

// fetchIDsCheck is how often the nodes look at the fetch state file
// (a stat; read again only when it changed): a fetch that saves a new ID
// during the run has its queries of the next fetchIDsCheck counted by
// the recent set and the cap (the writer still leaves them out).
const fetchIDsCheck = 100 * time.Millisecond

// fetchIDs follows the fetch state file of a --dht-state directory. It
// is shared by the run's nodes and its writer.
type fetchIDs struct {
	path string
	mu   sync.Mutex // held while the file is looked at (refresh)
	// seen is the file as last read (inode, size, modification time;
	// fetch replaces it by renaming a new file over it): it is read
	// again only when that changes. Guarded by mu.
	seen fileStamp
	// ids are the fetch node IDs known, most recent last: a slice never
	// changed once stored, which the nodes read without the lock.
	ids atomic.Pointer[[][20]byte]
	// checked is when the file was last looked at (UnixNano).
	checked atomic.Int64
}

type fileStamp struct {
	ino, size uint64
	mtime     time.Time
	found     bool
}

// newFetchIDs follows dir's fetch state file; dir "" (no --dht-state)
// follows none.
func newFetchIDs(dir string) *fetchIDs {
	if dir == "" {
		return nil
	}
	return &fetchIDs{path: filepath.Join(dir, dhtstate.FetchFile)}
}

// own reports whether id (a query's sender) is a fetch node's, looking at
// the file first if it was last looked at fetchIDsCheck before now or
// earlier (unless another node is looking at it: then as last read).
// Nodes call it for each get_peers and announce_peer.
func (f *fetchIDs) own(id []byte, now time.Time) bool {
	if f == nil {
		return false
	}
	if now.UnixNano()-f.checked.Load() >= int64(fetchIDsCheck) && f.mu.TryLock() {
		f.refresh(now)
		f.mu.Unlock()
	}
	return f.has(id)
}

// has reports whether id is a fetch node ID known.
func (f *fetchIDs) has(id []byte) bool {
	ids := f.ids.Load()
	return ids != nil && len(id) == 20 && slices.Contains(*ids, [20]byte(id))
}

// refresh reads the file again if it changed since it was last read; f.mu
// is held. A file that is missing, or not a fetch state, adds no ID and
// forgets none.
func (f *fetchIDs) refresh(now time.Time) {
	f.checked.Store(now.UnixNano())
	var st fileStamp
	if fi, err := os.Stat(f.path); err == nil {
		st = fileStamp{size: uint64(fi.Size()), mtime: fi.ModTime(), found: true}
		if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
			st.ino = sys.Ino
		}
	}
	if st == f.seen {
		return
	}
	f.seen = st
	if !st.found {
		return
	}
	var s struct {
		Kind string `json:"kind"`
		ID   string `json:"id"`
	}
	if ok, err := dhtstate.Load(f.path, &s); !ok || err != nil || s.Kind != dhtstate.FetchKind {
		return
	}
	id, ok := dhtstate.ParseID(s.ID)
	if !ok || f.has(id[:]) {
		return
	}
	var ids [][20]byte
	if old := f.ids.Load(); old != nil {
		ids = slices.Clone(*old)
	}
	if len(ids) == maxFetchIDs {
		ids = slices.Delete(ids, 0, 1)
	}
	ids = append(ids, id)
	f.ids.Store(&ids)
}

// drop removes from batch, in place, the incoming queries a fetch node
// sent, and returns what is left and how many it removed. It reads the
// file first: the batch's queries arrived after the fetch that sent
// them had saved its ID.
func (f *fetchIDs) drop(batch []schema.Observation) ([]schema.Observation, int) {
	if f == nil {
		return batch, 0
	}
	f.mu.Lock()
	f.refresh(time.Now())
	f.mu.Unlock()
	if ids := f.ids.Load(); ids == nil {
		return batch, 0
	}
	kept := 0
	for i := range batch {
		o := &batch[i]
		if f.has(o.NodeID) && (o.Source == schema.SourceGetPeers || o.Source == schema.SourceAnnouncePeer) {
			continue
		}
		if kept != i {
			batch[kept] = *o
		}
		kept++
	}
	return batch[:kept], len(batch) - kept
}
