// Package hashlist parses the lines of a hash list ("crawl this list"):
// hex infohashes, magnet URIs, and the JSON lines of magnetico's export or
// of our own export --format jsonl. dedup
// imports such lists as observations, fetch as jobs.
package hashlist

import (
	"bufio"
	"bytes"
	"encoding/base32"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/infohash/infohash/formats/schema"
)

// ParseLine parses one line of a hash list: a 40/64-character hex
// infohash, a magnet URI (btih in hex or base32, or a btmh v2 multihash),
// or a JSON object: a magnetico export's line (its "infoHash" field) or
// one of export --format jsonl (its "info_hash", or "info_hash_v2" when
// not null).
// Blank lines and lines starting with # give ok=false and no error.
func ParseLine(line string) (h schema.Hash, v2 []byte, typ int8, ok bool, err error) {
	line = strings.TrimSpace(line)
	if line == "" || strings.HasPrefix(line, "#") {
		return h, nil, 0, false, nil
	}
	if strings.HasPrefix(line, "{") {
		return parseMagneticoLine(line)
	}
	if !strings.HasPrefix(strings.ToLower(line), "magnet:") {
		h, v2, typ, err = schema.ParseHex(line)
		return h, v2, typ, err == nil, err
	}
	hs, err := MagnetHashes(line)
	if err != nil {
		return h, nil, 0, false, err
	}
	return hs[0].H, hs[0].V2, hs[0].Type, true, nil
}

// LineHashes returns every infohash a line of a hash list names: none for
// a blank line or a comment, both keys of a hybrid torrent's magnet URI,
// and otherwise the one ParseLine reads.
func LineHashes(line string) ([]Hash, error) {
	if l := strings.TrimSpace(line); len(l) > 7 && strings.EqualFold(l[:7], "magnet:") {
		return MagnetHashes(l)
	}
	h, v2, typ, ok, err := ParseLine(line)
	if err != nil || !ok {
		return nil, err
	}
	return []Hash{{H: h, V2: v2, Type: typ}}, nil
}

// Hash is one infohash a line names.
type Hash struct {
	H    schema.Hash // the DHT key: a v2 hash truncated to 20 bytes
	V2   []byte      // a v2 hash's full 32 bytes, nil for v1
	Type int8        // schema.HashV1 or schema.HashV2
}

// MagnetHashes returns every infohash a magnet URI names, in order and
// each once: one, or two for a hybrid torrent (urn:btih and urn:btmh, two
// keys on the DHT). The exact topics are the xt parameters, and the
// numbered ones of BEP 9's multi-topic form (xt.1, xt.2, …).
func MagnetHashes(line string) ([]Hash, error) {
	u, err := url.Parse(line)
	if err != nil {
		// url.Error quotes the whole line, however long.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("magnet URI %s: %w", schema.Quote(line), err)
	}
	var out []Hash
	add := func(m Hash) {
		for _, o := range out {
			if o.H == m.H {
				return
			}
		}
		out = append(out, m)
	}
	topics, notTopic := exactTopics(u.RawQuery)
	var unread error // why the last btmh topic was not read (another hash function)
	for _, xt := range topics {
		lx := strings.ToLower(xt)
		switch {
		case strings.HasPrefix(lx, "urn:btih:"):
			v := xt[len("urn:btih:"):]
			switch len(v) {
			case 40:
				h, v2, typ, err := schema.ParseHex(v)
				if err != nil {
					return nil, err
				}
				add(Hash{h, v2, typ})
			case 32:
				// Padding ("=") would decode to fewer than 20 bytes.
				b, err := base32.StdEncoding.DecodeString(strings.ToUpper(v))
				if err != nil || len(b) != len(schema.Hash{}) {
					return nil, fmt.Errorf("magnet btih %s: bad base32", schema.Quote(v))
				}
				var h schema.Hash
				copy(h[:], b)
				add(Hash{h, nil, schema.HashV1})
			default:
				return nil, fmt.Errorf("magnet btih %s: want 40 hex or 32 base32 characters", schema.Quote(v))
			}
		case strings.HasPrefix(lx, "urn:btmh:1220"):
			v := xt[len("urn:btmh:1220"):]
			b, err := hex.DecodeString(v)
			if err != nil || len(b) != 32 {
				return nil, fmt.Errorf("magnet btmh %s: want 64 hex characters after 1220", schema.Quote(v))
			}
			var h schema.Hash
			copy(h[:], b)
			add(Hash{h, b, schema.HashV2})
		case strings.HasPrefix(lx, "urn:btmh:"):
			// Another multihash: skipped beside a topic read (a hybrid's
			// btih), as Transmission does; alone it is why nothing was.
			unread = btmhError(xt[len("urn:btmh:"):])
		}
	}
	switch {
	case len(out) > 0:
		return out, nil
	case unread != nil:
		return nil, unread
	case notTopic != "":
		return nil, fmt.Errorf("magnet URI parameter %s is not \"xt\": parameter names are case-sensitive (BEP 9)",
			schema.Quote(notTopic))
	}
	return nil, fmt.Errorf("magnet URI without a urn:btih or urn:btmh xt parameter")
}

// btmhError says why a btmh topic's multihash v (hex: a varint hash
// function code, a varint length, the digest) that does not start with
// sha2-256's 1220 is not a v2 infohash (BEP 52: always sha2-256).
func btmhError(v string) error {
	b, err := hex.DecodeString(v[:min(len(v), 20)&^1]) // the code and length are a few bytes
	code, n := binary.Uvarint(b)
	switch {
	case err != nil || n <= 0:
		return fmt.Errorf("magnet btmh %s: want a multihash in hex, 1220 and 64 hex characters", schema.Quote(v))
	case code == 0x12:
		return fmt.Errorf("magnet btmh %s: want 64 hex characters after 1220", schema.Quote(v))
	}
	return fmt.Errorf("magnet btmh multihash 0x%x is not sha2-256 (0x12): a v2 infohash is sha2-256 (BEP 52)", code)
}

// exactTopics returns the values of a magnet query's xt and xt.N
// parameters, in the order they come. Each pair is read as url.Query
// reads it (one it cannot read is skipped), but url.Values would lose the
// order between xt.1 and xt.2. notTopic is the first key that is one of
// those but for case ("XT"), which is not one: BEP 9 names the parameter
// "xt", and libtorrent and Transmission compare names case-sensitively
// (they ignore "XT", then find no infohash).
func exactTopics(rawQuery string) (out []string, notTopic string) {
	for pair := range strings.SplitSeq(rawQuery, "&") {
		vs, _ := url.ParseQuery(pair)
		for k, v := range vs {
			switch {
			case isTopicKey(k):
				out = append(out, v...)
			case notTopic == "" && isTopicKey(strings.ToLower(k)):
				notTopic = k
			}
		}
	}
	return out, notTopic
}

// isTopicKey reports whether k is "xt" or "xt." followed by digits.
func isTopicKey(k string) bool {
	n, ok := strings.CutPrefix(k, "xt")
	if !ok {
		return false
	}
	if n == "" {
		return true
	}
	n, ok = strings.CutPrefix(n, ".")
	if !ok || n == "" {
		return false
	}
	for _, c := range []byte(n) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// jsonRecord is one JSON line of a list: a magnetico export's (the
// tgragnato fork's --export: JSON Lines of {"infoHash": hex, "name": …,
// "files": […]}) or our own export --format jsonl's ({"info_hash": 40
// hex, "info_hash_v2": 64 hex or null, …}).
type jsonRecord struct {
	InfoHash   *string `json:"infoHash"`
	InfoHashV1 *string `json:"info_hash"`
	InfoHashV2 *string `json:"info_hash_v2"`
}

func parseMagneticoLine(line string) (h schema.Hash, v2 []byte, typ int8, ok bool, err error) {
	var rec jsonRecord
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		return h, nil, 0, false, fmt.Errorf("JSON line: %w", err)
	}
	hx := rec.InfoHash
	switch {
	case rec.InfoHashV2 != nil:
		hx = rec.InfoHashV2 // a v2 hash's full 32 bytes; info_hash is its DHT key
	case rec.InfoHashV1 != nil:
		hx = rec.InfoHashV1
	}
	if hx == nil {
		return h, nil, 0, false, fmt.Errorf("JSON line without \"infoHash\" (magnetico) or \"info_hash\" (export --format jsonl)")
	}
	h, v2, typ, err = schema.ParseHex(*hx)
	return h, v2, typ, err == nil, err
}

// Scanner reads a hash list a line at a time, as bufio.Scanner does,
// with what every reader of a list needs: an editor's byte order mark
// dropped from the first line, lines up to a bound, and errors that say
// NAME:LINE.
type Scanner struct {
	name string
	max  int
	sc   *bufio.Scanner
	line int64
	// start and end are where the current line begins and where the
	// next one does, in bytes of r; unended is set when the current
	// line is r's last and no newline ends it.
	start, end int64
	unended    bool
}

// MaxLine bounds one line of a hash list, for every command that reads
// one (dedup imports it, fetch reads it as jobs): the line of a magnetico
// export lists every file of its torrent (3000 files make ~300 KB), and a
// Scanner's buffer grows to the longest line, up to this. A line of more
// bytes (its \n not counted, a \r before it counted) ends the scan: Err
// then says "NAME:LINE: line longer than 67108864 bytes".
const MaxLine = 64 << 20

// NewScanner scans r, named name in errors, with lines of up to MaxLine
// bytes.
func NewScanner(name string, r io.Reader) *Scanner { return newScanner(name, r, MaxLine) }

// newScanner is NewScanner with lines of up to max bytes, for tests.
func newScanner(name string, r io.Reader, max int) *Scanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), max+1) // a line of max bytes and its newline
	s := &Scanner{name: name, max: max, sc: sc}
	sc.Split(s.split)
	return s
}

// split is bufio.ScanLines, noting where each line is and whether a
// newline ends it.
func (s *Scanner) split(data []byte, atEOF bool) (int, []byte, error) {
	adv, tok, err := bufio.ScanLines(data, atEOF)
	if tok != nil {
		s.start, s.end = s.end, s.end+int64(adv)
		s.unended = data[adv-1] != '\n'
	}
	return adv, tok, err
}

// Scan advances to the next line; false at the end or on an error.
func (s *Scanner) Scan() bool {
	if !s.sc.Scan() {
		return false
	}
	s.line++
	return true
}

// Bytes is the current line, valid until the next Scan.
func (s *Scanner) Bytes() []byte {
	if s.line == 1 {
		return bytes.TrimPrefix(s.sc.Bytes(), utf8BOM)
	}
	return s.sc.Bytes()
}

// Line is the current line's number, from 1.
func (s *Scanner) Line() int64 { return s.line }

// Errorf is an error about the current line: "NAME:LINE: ...".
func (s *Scanner) Errorf(format string, args ...any) error {
	return fmt.Errorf("%s:%d: "+format, append([]any{s.name, s.line}, args...)...)
}

// BadLine is the error for the current line, which is not an entry of
// the list (err says why): "NAME:LINE: err", a CutLineError if the line
// is the list's last and no newline ends it.
func (s *Scanner) BadLine(err error) error {
	if s.unended {
		return &CutLineError{Name: s.name, Line: s.line, Whole: s.start, Size: s.end, Err: err}
	}
	return s.Errorf("%w", err)
}

// CutLineError reports a list whose last line, which no newline ends, is
// not an entry: most likely its writer was killed in the middle of it
// (many files lack a final newline, but then their last line is whole).
// The lines before it are whole. Its message is that of any bad line:
// "NAME:LINE: why".
type CutLineError struct {
	Name  string
	Line  int64 // the cut line's number, from 1
	Whole int64 // the bytes of the whole lines before it: where it begins
	Size  int64 // the list's length
	Err   error // why the line is not an entry
}

func (e *CutLineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.Name, e.Line, e.Err) }

func (e *CutLineError) Unwrap() error { return e.Err }

// AsCutLine returns the CutLineError in err's chain, if any.
func AsCutLine(err error) (*CutLineError, bool) {
	var ce *CutLineError
	ok := errors.As(err, &ce)
	return ce, ok
}

// Err is the error that ended the scan, naming the line it came on; nil
// at the end of the list.
func (s *Scanner) Err() error {
	err := s.sc.Err()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, bufio.ErrTooLong):
		return fmt.Errorf("%s:%d: line longer than %d bytes", s.name, s.line+1, s.max)
	default:
		return fmt.Errorf("%s:%d: %w", s.name, s.line+1, err)
	}
}

// utf8BOM, which some editors put at the start of a text file, is not
// part of a list's first line.
var utf8BOM = []byte("\xef\xbb\xbf")
