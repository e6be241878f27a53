package fetch

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/infohash/infohash/formats/hashlist"
)

// maxHashLine bounds one line of a hash list (a magnetico export's line
// lists every file of its torrent: 3000 files make ~300 KB).
const maxHashLine = 16 << 20

// hashList reads a text list of infohashes as jobs, one per hash: what
// dedup reads as a hash list (hex v1 or v2 infohashes, magnet URIs,
// magnetico JSON lines; blank lines and # comments skipped), parsed by
// hashlist.ParseLine. The jobs have no lease: merge applies their
// results as a manual fetch's.
type hashList struct {
	name string
	sc   *bufio.Scanner
	line int64
	err  error // sticky
}

func newHashList(name string, r io.Reader) *hashList {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), maxHashLine)
	return &hashList{name: name, sc: sc}
}

func (l *hashList) read(buf []jobRow) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n := 0
	for n < len(buf) {
		if !l.sc.Scan() {
			switch err := l.sc.Err(); {
			case errors.Is(err, bufio.ErrTooLong):
				l.err = fmt.Errorf("%s:%d: line longer than %d bytes", l.name, l.line+1, maxHashLine)
			case err != nil:
				l.err = fmt.Errorf("%s:%d: %w", l.name, l.line+1, err)
			default:
				l.err = io.EOF
			}
			return n, l.err
		}
		l.line++
		line := l.sc.Text()
		if l.line == 1 {
			line = strings.TrimPrefix(line, "\ufeff") // an editor's byte order mark
		}
		h, _, typ, ok, err := hashlist.ParseLine(line)
		if err != nil {
			l.err = fmt.Errorf("%s:%d: %w (a hash list has one infohash or magnet URI a line)", l.name, l.line, err)
			return n, l.err
		}
		if ok {
			buf[n] = jobRow{InfoHash: h, jobFields: jobFields{HashType: typ}}
			n++
		}
	}
	return n, nil
}
