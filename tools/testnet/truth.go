package testnet

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/infohash/infohash/formats/fsutil"
)

// Truth is what the testnet did, for tests to compare against. It is
// written as JSON by WriteTruth and the testnet program.
type Truth struct {
	Seed      uint64       `json:"seed"`
	Bootstrap []string     `json:"bootstrap"` // DHT nodes, "127.0.0.1:port"
	Announced []TruthEntry `json:"announced"` // seeded torrents, with their seeders
	Searched  []TruthEntry `json:"searched"`  // hashes only looked up with get_peers
	Dead      []TruthEntry `json:"dead"`      // announced once, then the peer went away
	// Extra holds entries added by others through Net.AddTruth, by kind
	// (for example misbehaving peers added by fetch tests).
	Extra map[string][]TruthEntry `json:"extra,omitempty"`
}

// TruthEntry is one hash and, where it has any, its peers.
type TruthEntry struct {
	InfoHash string   `json:"info_hash"` // lowercase hex
	Peers    []string `json:"peers,omitempty"`
	Name     string   `json:"name,omitempty"`
	InfoSize int      `json:"info_size,omitempty"` // bytes of the info dictionary
}

// ReadTruth reads a ground-truth JSON file.
func ReadTruth(path string) (Truth, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Truth{}, fmt.Errorf("testnet: %w", err)
	}
	var t Truth
	if err := json.Unmarshal(b, &t); err != nil {
		return Truth{}, fmt.Errorf("testnet: %s: %w", path, err)
	}
	return t, nil
}

// WriteTruthFile writes t to path as fsutil.WriteOutput writes an output:
// a file atomically (temporary file, fsync, rename), so that a reader
// polling for it never sees half of it, through a symbolic link to its
// target; a device or FIFO in place, never replaced (--truth /dev/null).
func WriteTruthFile(path string, t Truth) error {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return fmt.Errorf("testnet: truth: %w", err)
	}
	if err := fsutil.WriteOutput(path, append(b, '\n')); err != nil {
		return fmt.Errorf("testnet: truth: %w", err)
	}
	return nil
}

// AllHashes returns every hex hash of announced, dead and extra entries:
// the hashes that some testnet node may store and sample.
func (t Truth) AllHashes() map[string]bool {
	m := map[string]bool{}
	for _, l := range [][]TruthEntry{t.Announced, t.Dead} {
		for _, e := range l {
			m[e.InfoHash] = true
		}
	}
	for _, l := range t.Extra {
		for _, e := range l {
			m[e.InfoHash] = true
		}
	}
	return m
}
