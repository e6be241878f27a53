package fetch

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/internal/exitcode"
)

// The files fetch keeps in Options.DHTState. Their names differ from
// capture's (dht-state.json and lock), so that one directory can hold
// both: a capture and a fetch may run on it at the same time.
const (
	stateFileName = "fetch-dht.json"
	stateLockName = "fetch.lock"
	stateKind     = "infohash fetch DHT state"
	// maxSavedNodes bounds the nodes kept: a full routing table of one
	// node rarely holds more, and each is pinged at the next start.
	maxSavedNodes = 256
)

// dhtState is what a fetch leaves for the next one: its node ID and the
// nodes of its routing table that answered it during the run.
type dhtState struct {
	Kind    string      `json:"kind"`
	Version int         `json:"version"`
	ID      string      `json:"id"` // hex
	SavedAt time.Time   `json:"saved_at"`
	Nodes   []stateNode `json:"nodes"`
}

type stateNode struct {
	ID   string `json:"id"`   // hex
	Addr string `json:"addr"` // ip:port
}

// savedNode is a node of a loaded state.
type savedNode struct {
	ID   [20]byte
	Addr netip.AddrPort
}

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
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return st, false, nil
	}
	if err != nil {
		return st, false, fmt.Errorf("fetch: DHT state %s: %w", p, err)
	}
	var s dhtState
	if err := json.Unmarshal(b, &s); err != nil {
		return st, false, fmt.Errorf("fetch: DHT state %s: not JSON: %w", p, err)
	}
	if s.Kind != stateKind || s.Version != 1 {
		return st, false, fmt.Errorf("fetch: DHT state %s: not a fetch DHT state (kind %q, version %d; want %q, 1)", p, s.Kind, s.Version, stateKind)
	}
	id, err := hex.DecodeString(s.ID)
	if err != nil || len(id) != 20 {
		return st, false, fmt.Errorf("fetch: DHT state %s: node id %q is not 40 hex digits", p, s.ID)
	}
	st.ID = [20]byte(id)
	for _, n := range s.Nodes {
		nid, err := hex.DecodeString(n.ID)
		ap, err2 := netip.ParseAddrPort(n.Addr)
		if err != nil || err2 != nil || len(nid) != 20 || ap.Port() == 0 || !ap.Addr().IsValid() || len(st.Nodes) == maxSavedNodes {
			continue
		}
		st.Nodes = append(st.Nodes, savedNode{ID: [20]byte(nid), Addr: ap})
	}
	return st, true, nil
}

// saveDHTState writes id and nodes (at most maxSavedNodes) to dir's state
// file atomically and durably.
func saveDHTState(dir string, id [20]byte, nodes []savedNode, now time.Time) error {
	s := dhtState{Kind: stateKind, Version: 1, ID: hex.EncodeToString(id[:]), SavedAt: now.UTC(), Nodes: []stateNode{}}
	for _, n := range nodes[:min(len(nodes), maxSavedNodes)] {
		s.Nodes = append(s.Nodes, stateNode{ID: hex.EncodeToString(n.ID[:]), Addr: n.Addr.String()})
	}
	b, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		return fmt.Errorf("fetch: DHT state: %w", err)
	}
	if err := fsutil.WriteFile(filepath.Join(dir, stateFileName), append(b, '\n')); err != nil {
		return fmt.Errorf("fetch: DHT state: %w", err)
	}
	return nil
}

// lockDHTState takes dir for this run, creating it if needed. Two fetches
// sharing a state would run one node ID twice and the last to stop would
// overwrite the other's nodes, so a second one is refused (exit 75). The
// kernel drops the lock when the process dies, so a killed fetch never
// leaves it behind; the PID inside is for people.
func lockDHTState(dir string) (release func(), err error) {
	release, err = fsutil.TryLockDir(dir, stateLockName)
	var held *fsutil.HeldError
	switch {
	case errors.As(err, &held):
		return nil, exitcode.With(exitcode.Locked, fmt.Errorf(
			"fetch: --dht-state %s is in use by another fetch (%s); give each fetch running at once its own --dht-state", dir, held.Holder))
	case errors.Is(err, fsutil.ErrNotDir):
		return nil, exitcode.BadInput(fmt.Errorf("fetch: --dht-state %w", err))
	case err != nil:
		return nil, fmt.Errorf("fetch: --dht-state: %w", err)
	}
	return release, nil
}
