package capture

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/internal/exitcode"
)

// stateFileName is the file kept in Options.StateDir.
const stateFileName = "dht-state.json"

// state is what a run leaves for the next one: its node IDs, their
// routing tables and nodes known to answer BEP 51.
type state struct {
	Version  int            `json:"version"`
	Nodes    []stateNode    `json:"nodes"`
	Samplers []stateContact `json:"samplers,omitempty"`
}

type stateNode struct {
	ID    string         `json:"id"` // hex
	Table []stateContact `json:"table"`
}

type stateContact struct {
	ID   string `json:"id"`
	Addr string `json:"addr"`
}

func toState(cs []contact) []stateContact {
	out := make([]stateContact, 0, len(cs))
	for _, c := range cs {
		out = append(out, stateContact{ID: hex.EncodeToString(c.ID[:]), Addr: c.Addr.String()})
	}
	return out
}

func fromState(sc []stateContact) []contact {
	var out []contact
	for _, s := range sc {
		id, err := hex.DecodeString(s.ID)
		ap, err2 := netip.ParseAddrPort(s.Addr)
		if err != nil || err2 != nil || len(id) != 20 || !ap.Addr().Is4() {
			continue
		}
		out = append(out, contact{ID: [20]byte(id), Addr: ap})
	}
	return out
}

// loadState reads dir's state; a missing file is an empty state.
func loadState(dir string) (state, error) {
	if dir == "" {
		return state{}, nil
	}
	p := filepath.Join(dir, stateFileName)
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return state{}, nil
	}
	if err != nil {
		return state{}, fmt.Errorf("capture: dht state: %w", err)
	}
	var s state
	if err := json.Unmarshal(b, &s); err != nil {
		return state{}, fmt.Errorf("capture: dht state %s: %w", p, err)
	}
	return s, nil
}

// saveState writes s to dir atomically.
func saveState(dir string, s state) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("capture: dht state: %w", err)
	}
	s.Version = 1
	b, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		return fmt.Errorf("capture: dht state: %w", err)
	}
	if err := fsutil.WriteFile(filepath.Join(dir, stateFileName), append(b, '\n')); err != nil {
		return fmt.Errorf("capture: dht state: %w", err)
	}
	return nil
}

// nodeIDs returns k IDs: those saved in s first, then new ones spread
// evenly over the keyspace from a random base, so that the nodes of one
// capture watch different parts of it.
func nodeIDs(s state, k int, rnd func() uint64) [][20]byte {
	ids := make([][20]byte, 0, k)
	for _, sn := range s.Nodes {
		if b, err := hex.DecodeString(sn.ID); err == nil && len(b) == 20 && len(ids) < k {
			ids = append(ids, [20]byte(b))
		}
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
	return ids
}

// stateLockName is the file in Options.StateDir whose flock(2) a capture
// holds while it uses the directory's node IDs.
const stateLockName = "lock"

// lockState takes dir for this run: two captures sharing one state would
// run the same node IDs at once (which other nodes see as one node
// flapping between addresses) and the last to stop would overwrite the
// other's routing tables. The kernel drops the lock when the process
// dies, so a killed capture never leaves it behind. The PID is written
// inside for people.
func lockState(dir string) (release func(), err error) {
	if dir == "" {
		return func() {}, nil
	}
	release, err = fsutil.TryLockDir(dir, stateLockName)
	var held *fsutil.HeldError
	switch {
	case errors.As(err, &held):
		return nil, exitcode.With(exitcode.Locked, fmt.Errorf(
			"capture: --dht-state %s is in use by another capture (%s); give each capture running at once its own --dht-state", dir, held.Holder))
	case err != nil:
		return nil, fmt.Errorf("capture: dht state: %w", err)
	}
	return release, nil
}
