package dataset

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/infohash/infohash/formats/fsutil"
)

// FormatVersion is the dataset format this build writes. Older datasets
// are migrated on open (see migrate.go).
const FormatVersion = 4

// Table names.
const (
	TableState    = "state"
	TableTorrents = "torrents"
	TablePeers    = "peers"
	TableLeases   = "leases"
)

// Manifest describes one committed snapshot of the whole dataset.
type Manifest struct {
	FormatVersion int               `json:"format_version"`
	Snapshot      int64             `json:"snapshot"`
	CreatedAt     time.Time         `json:"created_at"`
	Writer        string            `json:"writer,omitempty"` // command that committed it
	Tables        map[string]*Table `json:"tables"`
	Applied       []Applied         `json:"applied,omitempty"` // entries for the ledger: a transaction's, which Commit moves into TableLedger (format 3: the whole ledger)
	Policy        json.RawMessage   `json:"policy,omitempty"`
}

// Table is one table's files in a snapshot.
type Table struct {
	Dir        string                `json:"dir"`        // relative to DIR, e.g. state/v/000000000003
	Partitions map[string][]FileInfo `json:"partitions"` // "00".."ff" ("" for unpartitioned tables)
	// Blooms holds an optional Bloom filter per partition, stored in
	// Dir/_bloom/.
	Blooms map[string]FileInfo `json:"blooms,omitempty"`
}

// FileInfo describes one data file.
type FileInfo struct {
	Name   string `json:"name"`
	Rows   int64  `json:"rows"`
	Size   int64  `json:"size"`
	CRC32C uint32 `json:"crc32c"`
	// Capacity is a Bloom filter's designed key count (Bloom files only).
	Capacity int64 `json:"capacity,omitempty"`
}

// Applied records an input that a commit folded in, by content checksum.
type Applied struct {
	ID   string    `json:"id"` // the content's checksum, hex (dedup: xxh3-128; merge: sha256)
	Name string    `json:"name"`
	Rows int64     `json:"rows"`
	At   time.Time `json:"at"`
}

// Rows is the table's total row count.
func (t *Table) Rows() int64 {
	var n int64
	for _, fs := range t.Partitions {
		for _, f := range fs {
			n += f.Rows
		}
	}
	return n
}

// PartitionKeys returns the table's partitions in order.
func (t *Table) PartitionKeys() []string {
	ks := make([]string, 0, len(t.Partitions))
	for k := range t.Partitions {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// PartitionDir is the relative directory of partition key in t.
func (t *Table) PartitionDir(key string) string {
	if key == "" {
		return t.Dir
	}
	return filepath.Join(t.Dir, "prefix="+key)
}

// Table returns table name, or an empty table if it has none yet.
func (m *Manifest) Table(name string) *Table {
	if t, ok := m.Tables[name]; ok {
		return t
	}
	return &Table{Partitions: map[string][]FileInfo{}, Blooms: map[string]FileInfo{}}
}

// BloomPath is the relative path of partition key's Bloom filter in t.
func (t *Table) BloomPath(f FileInfo) string { return filepath.Join(t.Dir, "_bloom", f.Name) }

func manifestName(snap int64) string { return fmt.Sprintf("%012d.json", snap) }

// readManifest reads the manifest at path: a copy of the one this
// process parsed last from that path, when the file is still the same
// (inode, size and modification time), since parsing it again would give
// the same manifest. A commit reads the current manifest four times
// (open, the snapshot it works on, the conflict check, the collection of
// old snapshots) and the kept ones once more; when manifests held the
// whole ledger (format 3), 200k entries took ~0.4 s a parse.
// A published manifest never changes in place, but a writer that
// re-publishes a snapshot number after a crash replaces the file (a new
// inode), which the check sees.
func readManifest(path string) (*Manifest, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if m := manifests.get(path, info); m != nil {
		return m.clone(), nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := &Manifest{}
	if err := json.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("%s: corrupt manifest: %w", path, err)
	}
	if m.Tables == nil {
		m.Tables = map[string]*Table{}
	}
	if again, err := os.Stat(path); err == nil && sameFile(info, again) {
		manifests.put(path, info, m)
		return m.clone(), nil
	}
	return m, nil
}

// manifestTableDirs returns the table folders a manifest names, without
// decoding the rest: the collection of old snapshots needs only these.
func manifestTableDirs(path string) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if m := manifests.get(path, info); m != nil {
		var dirs []string
		for _, t := range m.Tables {
			dirs = append(dirs, t.Dir)
		}
		return dirs, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m struct {
		Tables map[string]struct {
			Dir string `json:"dir"`
		} `json:"tables"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: corrupt manifest: %w", path, err)
	}
	var dirs []string
	for _, t := range m.Tables {
		dirs = append(dirs, t.Dir)
	}
	return dirs, nil
}

// manifests are the manifests this process parsed, by path (a few: the
// current one and the kept ones).
var manifests = &manifestCache{entries: map[string]cachedManifest{}}

type manifestCache struct {
	mu      sync.Mutex
	entries map[string]cachedManifest
}

type cachedManifest struct {
	info os.FileInfo
	m    *Manifest // never handed out: callers get clones
}

// manifestCacheSize bounds the cache: more than the snapshots --keep
// usually holds, so that collecting old snapshots parses each once.
const manifestCacheSize = 8

func (c *manifestCache) get(path string, info os.FileInfo) *Manifest {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[path]; ok && sameFile(e.info, info) {
		return e.m
	}
	return nil
}

func (c *manifestCache) put(path string, info os.FileInfo, m *Manifest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= manifestCacheSize {
		clear(c.entries)
	}
	c.entries[path] = cachedManifest{info: info, m: m}
}

// sameFile reports whether a and b describe the same, unchanged file.
func sameFile(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

func writeManifest(path string, m *Manifest) error {
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	return fsutil.WriteFile(path, append(b, '\n'))
}

// clone deep-copies m so a transaction can edit it.
func (m *Manifest) clone() *Manifest {
	c := *m
	c.Tables = make(map[string]*Table, len(m.Tables))
	for k, t := range m.Tables {
		nt := &Table{Dir: t.Dir, Partitions: make(map[string][]FileInfo, len(t.Partitions)), Blooms: map[string]FileInfo{}}
		for p, f := range t.Blooms {
			nt.Blooms[p] = f
		}
		for p, fs := range t.Partitions {
			nt.Partitions[p] = append([]FileInfo(nil), fs...)
		}
		c.Tables[k] = nt
	}
	c.Applied = append([]Applied(nil), m.Applied...)
	return &c
}
