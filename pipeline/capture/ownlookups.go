package capture

import (
	"os"
	"path/filepath"
	"slices"
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
// sends anything (dhtstate.FetchFile); the writer leaves out the
// get_peers and announce_peer observations whose sender has that ID.

// maxFetchIDs bounds the fetch node IDs remembered in a run: a fetch
// keeps its ID from run to run, so a new one is rare (a state file lost
// or replaced); an old one's queries may still be on their way.
const maxFetchIDs = 8

// fetchIDs follows the fetch state file of a --dht-state directory.
type fetchIDs struct {
	path string
	// seen is the file as last read (inode, size, modification time;
	// fetch replaces it by renaming a new file over it): it is read
	// again only when that changes.
	seen fileStamp
	ids  [][20]byte // most recent last
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

// refresh reads the file again if it changed since the last call. A file
// that is missing, or not a fetch state, adds no ID and forgets none.
func (f *fetchIDs) refresh() {
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
	if !ok || slices.Contains(f.ids, id) {
		return
	}
	if len(f.ids) == maxFetchIDs {
		f.ids = slices.Delete(f.ids, 0, 1)
	}
	f.ids = append(f.ids, id)
}

// drop removes from batch, in place, the incoming queries a fetch node
// sent, and returns what is left and how many it removed. It reads the
// file first: the batch's queries arrived after the fetch that sent
// them had saved its ID.
func (f *fetchIDs) drop(batch []schema.Observation) ([]schema.Observation, int) {
	if f == nil {
		return batch, 0
	}
	f.refresh()
	if len(f.ids) == 0 {
		return batch, 0
	}
	kept := 0
	for i := range batch {
		o := &batch[i]
		if len(o.NodeID) == 20 && slices.Contains(f.ids, [20]byte(o.NodeID)) &&
			(o.Source == schema.SourceGetPeers || o.Source == schema.SourceAnnouncePeer) {
			continue
		}
		if kept != i {
			batch[kept] = *o
		}
		kept++
	}
	return batch[:kept], len(batch) - kept
}
