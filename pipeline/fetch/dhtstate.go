package fetch

import (
	"encoding/hex"
	"fmt"
	"path/filepath"
	"time"

	"github.com/infohash/infohash/internal/dhtstate"
)

// The files fetch keeps in Options.DHTState. Their names differ from
// capture's (dht-state.json and lock), so that one directory can hold
// both: a capture and a fetch may run on it at the same time.
const (
	stateFileName = dhtstate.FetchFile
	stateLockName = "fetch.lock"
	stateKind     = dhtstate.FetchKind
	// maxSavedNodes bounds the nodes kept: a full routing table of one
	// node rarely holds more, and each is pinged at the next start.
	maxSavedNodes = 256
)

// dhtState is what a fetch leaves for the next one: its node ID and the
// nodes of its routing table that answered it during the run.
type dhtState struct {
	Kind    string           `json:"kind"`
	Version int              `json:"version"`
	ID      string           `json:"id"` // hex
	SavedAt time.Time        `json:"saved_at"`
	Nodes   []dhtstate.Entry `json:"nodes"`
}

// savedNode is a node of a loaded state.
type savedNode = dhtstate.Contact

// loadedState is a state file's content, checked.
type loadedState struct {
	ID    [20]byte
	Nodes []savedNode
}

// loadDHTState reads dir's state file. A missing file is an empty state
// (ok false, no error); a file that is not a fetch state of this version
// is an error naming it, which the caller reports and then ignores.
// Node entries that do not parse are skipped.
func loadDHTState(dir string) (st loadedState, ok bool, err error) {
	p := filepath.Join(dir, stateFileName)
	var s dhtState
	if found, err := dhtstate.Load(p, &s); !found || err != nil {
		if err != nil {
			err = fmt.Errorf("fetch: DHT state %w", err)
		}
		return st, false, err
	}
	if s.Kind != stateKind || s.Version != 1 {
		return st, false, fmt.Errorf("fetch: DHT state %s: not a fetch DHT state (kind %q, version %d; want %q, 1)", p, s.Kind, s.Version, stateKind)
	}
	if st.ID, ok = dhtstate.ParseID(s.ID); !ok {
		return st, false, fmt.Errorf("fetch: DHT state %s: node id %q is not 40 hex digits", p, s.ID)
	}
	st.Nodes = dhtstate.Contacts(s.Nodes, nil, maxSavedNodes)
	return st, true, nil
}

// saveDHTState writes id and nodes (at most maxSavedNodes) to dir's state
// file atomically and durably.
func saveDHTState(dir string, id [20]byte, nodes []savedNode, now time.Time) error {
	s := dhtState{Kind: stateKind, Version: 1, ID: hex.EncodeToString(id[:]), SavedAt: now.UTC(),
		Nodes: dhtstate.Entries(nodes[:min(len(nodes), maxSavedNodes)])}
	if err := dhtstate.Save(filepath.Join(dir, stateFileName), s); err != nil {
		return fmt.Errorf("fetch: DHT state: %w", err)
	}
	return nil
}

// lockDHTState takes dir for this run, creating it if needed: a second
// fetch on one state is refused (exit 75; see dhtstate.Lock).
func lockDHTState(dir string) (release func(), err error) {
	return dhtstate.Lock(dir, stateLockName, "fetch")
}
