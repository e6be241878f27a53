package fetch

import (
	"bufio"
	"io"

	"github.com/infohash/infohash/formats/hashlist"
)

// hashListAhead bounds the jobs parsed ahead of the reader.
const hashListAhead = 256

// hashList reads a text list of infohashes as jobs, one per hash: what
// dedup reads as a hash list (hex v1 or v2 infohashes, magnet URIs, both
// keys of a hybrid torrent's, JSON lines (magnetico's, export jsonl's); blank lines and #
// comments skipped, lines up to hashlist.MaxLine), parsed by
// hashlist.LineHashes. The jobs have no lease: merge applies their
// results as a manual fetch's.
//
// A goroutine (scan) parses the list as it arrives, and read hands over
// the jobs parsed so far once scan waits for input: a list piped in a
// line at a time starts each job as its line comes, not when a batch is
// full or the input ends.
type hashList struct {
	sc      *hashlist.Scanner
	rows    chan jobRow   // jobs parsed, in order; closed when scan ends
	waiting chan struct{} // a token when scan waits for input
	stop    chan struct{} // closed by close: scan hands over no more jobs
	end     error         // why scan ended (io.EOF: the list's end); set before rows closes
	err     error         // sticky: end, once read has seen rows close
}

func newHashList(name string, br *bufio.Reader) *hashList {
	l := &hashList{rows: make(chan jobRow, hashListAhead), waiting: make(chan struct{}, 1), stop: make(chan struct{})}
	l.sc = hashlist.NewScanner(name, &waitSignal{br: br, waiting: l.waiting})
	go l.scan()
	return l
}

// waitSignal reads br, leaving a token in waiting before a read that
// finds nothing buffered (and so may wait for the writer).
type waitSignal struct {
	br      *bufio.Reader
	waiting chan struct{}
}

func (w *waitSignal) Read(p []byte) (int, error) {
	if w.br.Buffered() == 0 {
		select {
		case w.waiting <- struct{}{}:
		default: // a token is there already
		}
	}
	return w.br.Read(p)
}

// scan parses the list into l.rows until its end, a bad line or close.
func (l *hashList) scan() {
	defer close(l.rows)
	for l.sc.Scan() {
		hs, err := hashlist.LineHashes(string(l.sc.Bytes()))
		if err != nil {
			if l.end = l.sc.CSVHeaderError("fetch reads jobs (Parquet or an Arrow stream) or"); l.end == nil {
				l.end = l.sc.Errorf("%w (a hash list has one infohash or magnet URI a line)", err)
			}
			return
		}
		for _, h := range hs { // a hybrid torrent's magnet names two keys
			select {
			case l.rows <- jobRow{InfoHash: h.H, jobFields: jobFields{HashType: h.Type, InfoHashV2: h.V2}}:
			case <-l.stop:
				l.end = errClosed
				return
			}
		}
	}
	if l.end = l.sc.Err(); l.end == nil {
		l.end = io.EOF
	}
}

// read waits for a job, then fills buf with the jobs that follow it until
// buf is full or scan waits for input; io.EOF ends the list.
func (l *hashList) read(buf []jobRow) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n := 0
	for n < len(buf) {
		var row jobRow
		var ok bool
		select {
		case row, ok = <-l.rows:
		default:
			if n > 0 {
				select {
				case row, ok = <-l.rows:
				case <-l.waiting:
					return n, nil
				}
			} else {
				row, ok = <-l.rows
			}
		}
		if !ok {
			l.err = l.end
			return n, l.err
		}
		buf[n] = row
		n++
	}
	return n, nil
}

// close stops scan handing over jobs. A scan waiting for input ends when
// the input gives some, or ends (closing a file ends it at once).
func (l *hashList) close() { close(l.stop) }
