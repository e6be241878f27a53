package schedule

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/infohash/infohash/formats/schema"
)

// BlocklistName is the blocklist's file name inside a dataset directory.
const BlocklistName = "blocklist"

// maxBlocklistLine bounds one line of a blocklist file.
const maxBlocklistLine = 4096

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
// list.
func LoadBlocklist(dir string) (Blocklist, error) {
	path := filepath.Join(dir, BlocklistName)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Blocklist{}, nil
	}
	if err != nil {
		return Blocklist{}, fmt.Errorf("blocklist: %w", err)
	}
	defer f.Close()
	return ParseBlocklist(f, path)
}

// ParseBlocklist reads hashes, one per line: 40 hex characters (v1) or 64
// (v2, kept as its 20-byte DHT form), surrounding blanks ignored. A "#"
// starts a comment that runs to the end of the line; blank lines are
// skipped. Errors name the file and line: "blocklist: DIR/blocklist:7: ...".
func ParseBlocklist(r io.Reader, name string) (Blocklist, error) {
	var b Blocklist
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 256), maxBlocklistLine)
	line := 0
	for sc.Scan() {
		line++
		text, _, _ := strings.Cut(sc.Text(), "#")
		text = strings.TrimSpace(text)
		if text == "" {
			continue
		}
		h, _, _, err := schema.ParseHex(text)
		if err != nil {
			return Blocklist{}, fmt.Errorf("blocklist: %s:%d: %w", name, line, err)
		}
		b.Add(h)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("line longer than %d bytes", maxBlocklistLine)
		}
		return Blocklist{}, fmt.Errorf("blocklist: %s:%d: %w", name, line+1, err)
	}
	return b, nil
}
