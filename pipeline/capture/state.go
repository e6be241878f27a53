package capture

import (
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/internal/dhtstate"
	"github.com/infohash/infohash/internal/exitcode"
)

// stateFileName is the file kept in Options.StateDir.
const stateFileName = "dht-state.json"

// state is what a run leaves for the next one: its node IDs, their
// routing tables, nodes known to answer BEP 51 and when those may be
// sampled again.
type state struct {
	Version  int              `json:"version"`
	Nodes    []stateNode      `json:"nodes"`
	Samplers []dhtstate.Entry `json:"samplers,omitempty"`
	// Resting are the BEP 51 nodes whose interval had not ended when
	// the run stopped (see crawler.resting); older files have none.
	Resting []restingEntry `json:"resting,omitempty"`
}

type stateNode struct {
	ID    string           `json:"id"` // hex
	Table []dhtstate.Entry `json:"table"`
}

// toState encodes contacts for the state file.
func toState(cs []contact) []dhtstate.Entry {
	out := make([]dhtstate.Contact, len(cs))
	for i, c := range cs {
		out[i] = dhtstate.Contact(c)
	}
	return dhtstate.Entries(out)
}

// fromState decodes saved contacts: capture's nodes speak IPv4 only.
func fromState(es []dhtstate.Entry) []contact {
	cs := dhtstate.Contacts(es, func(ap netip.AddrPort) bool { return ap.Addr().Is4() }, 0)
	out := make([]contact, len(cs))
	for i, c := range cs {
		out[i] = contact(c)
	}
	return out
}

// stateVersion is the version of the state file this build reads and
// writes.
const stateVersion = 1

// errStateVersion is wrapped by loadState's error for a state file of
// another version: Run refuses it (exit 2) rather than read it as its own
// and overwrite it at the end.
var errStateVersion = errors.New("unknown version")

// loadState reads dir's state; a missing file is an empty state.
func loadState(dir string) (state, error) {
	var s state
	if dir == "" {
		return s, nil
	}
	p := filepath.Join(dir, stateFileName)
	found, err := dhtstate.Load(p, &s)
	if err != nil {
		return state{}, fmt.Errorf("capture: dht state %w", err)
	}
	if found && s.Version != stateVersion {
		return state{}, exitcode.BadInput(fmt.Errorf("capture: dht state %s: %w %d (this build reads version %d; move the file aside to start cold)",
			p, errStateVersion, s.Version, stateVersion))
	}
	return s, nil
}

// saveState writes s to dir atomically and durably (dir too, if it is
// new: lockState made it, but it may have gone since).
func saveState(dir string, s state) error {
	if dir == "" {
		return nil
	}
	if err := fsutil.MkdirAllSynced(dir, 0o755); err != nil {
		return fmt.Errorf("capture: dht state: %w", err)
	}
	s.Version = stateVersion
	if err := dhtstate.Save(filepath.Join(dir, stateFileName), s); err != nil {
		return fmt.Errorf("capture: dht state: %w", err)
	}
	return nil
}

// nodeIDs returns k IDs: those saved in s first, then new ones spread
// evenly over the keyspace from a random base, so that the nodes of one
// capture watch different parts of it. tables[i] is the routing table
// saved with ids[i] (nil for a new ID): a saved entry whose ID does not
// parse is skipped with its table, and so is one repeating an earlier
// entry's ID (two nodes with one ID would watch one part of the keyspace
// twice), so the entries after it are not at the index of their node.
// spare holds the tables of the saved entries no node took (those and
// the entries past k): contacts still worth crawling from.
func nodeIDs(s state, k int, rnd func() uint64) (ids [][20]byte, tables [][]dhtstate.Entry, spare []dhtstate.Entry) {
	ids = make([][20]byte, 0, k)
	tables = make([][]dhtstate.Entry, k)
	for _, sn := range s.Nodes {
		id, ok := dhtstate.ParseID(sn.ID)
		if ok && len(ids) < k && !slices.Contains(ids, id) {
			tables[len(ids)] = sn.Table
			ids = append(ids, id)
			continue
		}
		spare = append(spare, sn.Table...)
	}
	base := uint32(rnd())
	for i := len(ids); i < k; i++ {
		var id [20]byte
		top := base + uint32(uint64(i)<<32/uint64(k))
		id[0], id[1], id[2], id[3] = byte(top>>24), byte(top>>16), byte(top>>8), byte(top)
		for j := 4; j < 20; j++ {
			id[j] = byte(rnd())
		}
		ids = append(ids, id)
	}
	return ids, tables, spare
}

// stateLockName is the file in Options.StateDir whose flock(2) a capture
// holds while it uses the directory's node IDs (dhtstate.Lock).
const stateLockName = "lock"

// lockState takes dir for this run (see dhtstate.Lock).
func lockState(dir string) (release func(), err error) {
	if dir == "" {
		return func() {}, nil
	}
	return dhtstate.Lock(dir, stateLockName, "capture")
}
