package schedule

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/formats/hashlist"
	"github.com/infohash/infohash/formats/schema"
)

// BlocklistName is the blocklist's file name inside a dataset directory.
const BlocklistName = "blocklist"

// Blocklist is a set of hashes that are never planned nor exported. The
// zero value is an empty list.
type Blocklist struct {
	set map[schema.Hash]struct{}
}

// Contains reports whether h is listed.
func (b Blocklist) Contains(h schema.Hash) bool {
	_, ok := b.set[h]
	return ok
}

// Len is the number of distinct listed hashes.
func (b Blocklist) Len() int { return len(b.set) }

// Add lists h.
func (b *Blocklist) Add(h schema.Hash) {
	if b.set == nil {
		b.set = make(map[schema.Hash]struct{})
	}
	b.set[h] = struct{}{}
}

// LoadBlocklist reads DIR/blocklist; a dataset without one has an empty
// list. A symbolic link is followed; one to nothing (a shared list moved
// away), or anything but a regular file there, is an error: taken as no
// list, its hashes would be planned and exported, and a FIFO would block
// the read for good.
func LoadBlocklist(dir string) (Blocklist, error) {
	path := filepath.Join(dir, BlocklistName)
	// Only a regular file (a link is followed, as it was): a FIFO there
	// blocked plan, export and status for good.
	f, err := fsutil.OpenRegularTarget(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		if target, lerr := os.Readlink(path); lerr == nil {
			return Blocklist{}, fmt.Errorf("blocklist: %s is a symbolic link to %q, which does not exist "+
				"(remove the link for no blocklist)", path, target)
		}
		return Blocklist{}, nil
	}
	if err != nil {
		return Blocklist{}, fmt.Errorf("blocklist: %w", err)
	}
	defer f.Close()
	return ParseBlocklist(f, path)
}

// ParseBlocklist reads a blocklist: the lines of a hash list as dedup
// imports it (formats/hashlist: a 40- or 64-digit hex infohash, a magnet
// URI, whose btih and btmh keys are all listed, or a JSON line of
// magnetico's or our own export), each hash kept as its 20-byte DHT key.
// Blank lines and lines starting with "#" are skipped, and, as blocklists
// always allowed, a "#" after a hash starts a comment that runs to the end
// of the line (but in a JSON line, whose strings may hold one). Errors
// name the file and line: "blocklist: DIR/blocklist:7: ...".
func ParseBlocklist(r io.Reader, name string) (Blocklist, error) {
	var b Blocklist
	sc := hashlist.NewScanner(name, r)
	for sc.Scan() {
		hs, err := hashlist.LineHashes(uncomment(string(sc.Bytes())))
		if err != nil {
			return Blocklist{}, fmt.Errorf("blocklist: %w", sc.Errorf("%w", err))
		}
		for _, h := range hs {
			b.Add(h.H)
		}
	}
	if err := sc.Err(); err != nil {
		return Blocklist{}, fmt.Errorf("blocklist: %w", err)
	}
	return b, nil
}

// uncomment drops a comment after a hash ("HEX  # reason"). A magnet
// URI loses nothing it names: a "#" in it begins its fragment, which holds
// no exact topic. A JSON line is left whole.
func uncomment(line string) string {
	if strings.HasPrefix(strings.TrimSpace(line), "{") {
		return line
	}
	line, _, _ = strings.Cut(line, "#")
	return line
}
