package dedup

import (
	"bytes"
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/fsutil"
)

// inputCache is dedup's cache of input checksums (DIR/input-cache), as
// git's index or rsync keep one: a file whose path, device, inode, size,
// mtime and ctime are those recorded with its checksum is taken to hold
// what it held then, and is neither probed nor read again. A run over a
// capture folder that is never cleaned so reads only its new files.
//
// The cache only saves time. A file that is missing, damaged or from
// another version is ignored (a debug line) and rebuilt; one that cannot
// be written leaves the next run to read the inputs again. It is written
// whole under a temporary name and renamed (fsutil.WriteFile), so a kill
// leaves the old cache or the new one, and every entry in either states a
// checksum computed from the file's bytes.
type inputCache struct {
	path    string
	entries map[string]cacheEntry // by absolute path
	used    map[string]bool       // entries this run hit
	damaged bool                  // the file could not be used: rewrite it
}

// cacheEntry is what the cache knows of one input file.
type cacheEntry struct {
	Path  string    `json:"path"` // absolute
	Dev   uint64    `json:"dev"`
	Ino   uint64    `json:"ino"`
	Size  int64     `json:"size"`
	Mtime int64     `json:"mtime_ns"`
	Ctime int64     `json:"ctime_ns"`
	ID    string    `json:"id"` // the content checksum, as checksumFile gives it
	Kind  inputKind `json:"kind"`
	At    int64     `json:"at_ns"` // when reading it for the checksum began
}

// racyWindow is how much older than the moment its checksum was begun a
// file's mtime and ctime must be for the checksum to be cached: a write
// in the same tick of the file's clock as the one before it leaves both
// unchanged (git's "racily clean" entries). Such a file is read again
// next run, when it is old enough. It also covers a few seconds of skew
// between this host's clock and a file server's. Tests shorten it.
var racyWindow = 2 * time.Second

// maxCacheEntries caps the cache (entries for files that no longer exist
// or have changed are dropped anyway): beyond it, the entries checksummed
// longest ago go first. A year of files every 15 minutes is 35,040.
const maxCacheEntries = 1 << 17

// cacheMagic starts the cache file, followed by the xxh3-64 (hex) of the
// JSON after the first line.
const cacheMagic = "infohash input-cache 1 "

// maxCacheFile is more than maxCacheEntries entries take; a larger file
// is not read.
const maxCacheFile = 256 << 20

// loadInputCache reads the cache of dataset d. A cache it cannot use is
// logged at debug level and replaced by an empty one.
func loadInputCache(d *dataset.Dataset) *inputCache {
	c := &inputCache{path: d.Path(dataset.InputCacheFile), entries: map[string]cacheEntry{}, used: map[string]bool{}}
	entries, err := readCache(c.path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			slog.Debug("dedup: input cache ignored: it is rebuilt as inputs are read", "file", c.path, "err", err)
			c.damaged = true
		}
		return c
	}
	for _, e := range entries {
		if e.clean() { // always, unless written with a shorter racyWindow
			c.entries[e.Path] = e
		}
	}
	return c
}

// readCache reads and checks the cache file at path.
func readCache(path string) ([]cacheEntry, error) {
	// Only a regular file: a FIFO there blocked every dedup for good.
	f, err := fsutil.OpenRegular(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCacheFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxCacheFile {
		return nil, errors.New("larger than a cache grows")
	}
	return decodeCache(b)
}

// decodeCache parses a cache file's bytes, refusing any that a writer of
// this version would not have written whole.
func decodeCache(b []byte) ([]cacheEntry, error) {
	head, body, ok := bytes.Cut(b, []byte("\n"))
	sum, found := bytes.CutPrefix(head, []byte(cacheMagic))
	if !ok || !found {
		return nil, errors.New("not an input cache of this version")
	}
	if want, err := strconv.ParseUint(string(sum), 16, 64); err != nil || len(sum) != 16 || xxh3.Hash(body) != want {
		return nil, errors.New("checksum mismatch (damaged or cut short)")
	}
	var entries []cacheEntry
	if err := json.Unmarshal(body, &entries); err != nil {
		return nil, err
	}
	paths := make(map[string]bool, len(entries))
	for _, e := range entries {
		if !e.valid() || paths[e.Path] {
			return nil, fmt.Errorf("entry for %q is not one a writer makes", e.Path)
		}
		paths[e.Path] = true
	}
	return entries, nil
}

// valid reports whether e is an entry the cache could hold: its id is as
// checksumFile gives it (lowercase hex), since an input's id must match
// the one the manifest recorded when it was applied.
func (e cacheEntry) valid() bool {
	id, err := hex.DecodeString(e.ID)
	return filepath.IsAbs(e.Path) && filepath.Clean(e.Path) == e.Path && err == nil && len(id) == 16 &&
		hex.EncodeToString(id) == e.ID && e.Kind >= kindParquet && e.Kind <= kindText && e.Size > 0
}

// clean reports whether e's file was last changed clearly before its
// checksum was begun (racyWindow).
func (e cacheEntry) clean() bool {
	limit := e.At - racyWindow.Nanoseconds()
	return e.Mtime < limit && e.Ctime < limit
}

// sameFile reports whether e and o describe the same file, unchanged.
func (e cacheEntry) sameFile(o cacheEntry) bool {
	return e.Path == o.Path && e.Dev == o.Dev && e.Ino == o.Ino && e.Size == o.Size &&
		e.Mtime == o.Mtime && e.Ctime == o.Ctime
}

// statEntry is the key part of an entry for the file at abs, from fi.
func statEntry(abs string, fi fs.FileInfo) (cacheEntry, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || !fi.Mode().IsRegular() {
		return cacheEntry{}, false
	}
	return cacheEntry{Path: abs, Dev: uint64(st.Dev), Ino: st.Ino, Size: fi.Size(),
		Mtime: fi.ModTime().UnixNano(), Ctime: st.Ctim.Nano()}, true
}

// probe is probe, but for a file the cache knows unchanged: that one's
// kind and id come from the cache, without opening it.
func (c *inputCache) probe(path, name, data string) (input, error) {
	if c != nil {
		if e, ok := c.lookup(path); ok {
			return input{name: name, path: path, id: e.ID, size: e.Size, kind: e.Kind}, nil
		}
	}
	return probe(path, name, data)
}

// lookup returns the entry for the file at path if it is clean and the
// file is as it records.
func (c *inputCache) lookup(path string) (cacheEntry, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return cacheEntry{}, false
	}
	e, ok := c.entries[abs]
	if !ok || !e.clean() {
		return cacheEntry{}, false
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return cacheEntry{}, false
	}
	if now, ok := statEntry(abs, fi); !ok || !e.sameFile(now) {
		return cacheEntry{}, false
	}
	c.used[abs] = true
	return e, true
}

// save writes the cache back, with the entries the run's checksums
// computed, at the end of a run that succeeded (Run calls it only then: a
// failed run changes no file of the dataset); the entries of files that
// are gone or changed are dropped then. It writes nothing if the run was
// interrupted, if the checksums are not done, or if they add nothing (and
// the file was usable). A failure is logged at debug level: the next run
// reads its inputs again.
func (c *inputCache) save(ctx context.Context, sums *checksums) {
	if ctx.Err() != nil {
		return
	}
	select {
	case <-sums.done:
	default:
		return
	}
	if len(sums.fresh) == 0 && !c.damaged {
		return // only hits, or nothing cacheable: the file holds all it can
	}
	next := make(map[string]cacheEntry, len(c.entries)+len(sums.fresh))
	for abs, e := range c.entries {
		if c.used[abs] {
			next[abs] = e
			continue
		}
		if fi, err := os.Stat(abs); err == nil {
			if now, ok := statEntry(abs, fi); ok && e.sameFile(now) {
				next[abs] = e
			}
		}
	}
	for _, e := range sums.fresh {
		next[e.Path] = e
	}
	entries := make([]cacheEntry, 0, len(next))
	for _, e := range next {
		entries = append(entries, e)
	}
	// Newest first, and in a fixed order.
	slices.SortFunc(entries, func(a, b cacheEntry) int {
		return cmp.Or(cmp.Compare(b.At, a.At), cmp.Compare(a.Path, b.Path))
	})
	if len(entries) > maxCacheEntries {
		entries = entries[:maxCacheEntries]
	}
	if err := fsutil.WriteFile(c.path, encodeCache(entries)); err != nil {
		slog.Debug("dedup: input cache not saved: the next run reads its inputs again", "file", c.path, "err", err)
	}
}

// encodeCache is the cache file holding entries.
func encodeCache(entries []cacheEntry) []byte {
	body, _ := json.Marshal(entries) // plain structs: cannot fail
	return append(fmt.Appendf(nil, "%s%016x\n", cacheMagic, xxh3.Hash(body)), body...)
}
