package fetch

import (
	"io"

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
	sc  *hashlist.Scanner
	err error // sticky
}

func newHashList(name string, r io.Reader) *hashList {
	return &hashList{sc: hashlist.NewScanner(name, r, maxHashLine)}
}

func (l *hashList) read(buf []jobRow) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n := 0
	for n < len(buf) {
		if !l.sc.Scan() {
			if l.err = l.sc.Err(); l.err == nil {
				l.err = io.EOF
			}
			return n, l.err
		}
		h, v2, typ, ok, err := hashlist.ParseLine(string(l.sc.Bytes()))
		if err != nil {
			l.err = l.sc.Errorf("%w (a hash list has one infohash or magnet URI a line)", err)
			return n, l.err
		}
		if ok {
			buf[n] = jobRow{InfoHash: h, jobFields: jobFields{HashType: typ, InfoHashV2: v2}}
			n++
		}
	}
	return n, nil
}
