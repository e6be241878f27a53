package dedup

import (
	"bufio"
	"bytes"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/infohash/infohash/formats/schema"
)

// maxLine bounds one line of a hash list: the line of a magnetico export
// lists every file of its torrent (3000 files make ~300 KB), and the
// buffer grows to the longest line, up to this. A variable for tests.
var maxLine = 64 << 20

// utf8BOM, which some editors put at the start of a text file, is not
// part of a list's first line.
var utf8BOM = []byte("\xef\xbb\xbf")

// ParseHashLine parses one line of a hash list: a 40/64-character hex
// infohash, a magnet URI (btih in hex or base32, or a btmh v2 multihash),
// or a JSON object of a magnetico export (its "infoHash" field).
// Blank lines and lines starting with # give ok=false and no error.
func ParseHashLine(line string) (h schema.Hash, v2 []byte, typ int8, ok bool, err error) {
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
	hs, err := magnetHashes(line)
	if err != nil {
		return h, nil, 0, false, err
	}
	return hs[0].h, hs[0].v2, hs[0].typ, true, nil
}

// magnetHash is one infohash a magnet URI names.
type magnetHash struct {
	h   schema.Hash
	v2  []byte
	typ int8
}

// magnetHashes returns every infohash a magnet URI names, in order and
// each once: one, or two for a hybrid torrent (urn:btih and urn:btmh, two
// keys on the DHT).
func magnetHashes(line string) ([]magnetHash, error) {
	u, err := url.Parse(line)
	if err != nil {
		return nil, fmt.Errorf("magnet URI: %w", err)
	}
	var out []magnetHash
	add := func(m magnetHash) {
		for _, o := range out {
			if o.h == m.h {
				return
			}
		}
		out = append(out, m)
	}
	for _, xt := range u.Query()["xt"] {
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
				add(magnetHash{h, v2, typ})
			case 32:
				b, err := base32.StdEncoding.DecodeString(strings.ToUpper(v))
				if err != nil {
					return nil, fmt.Errorf("magnet btih %q: bad base32", v)
				}
				var h schema.Hash
				copy(h[:], b)
				add(magnetHash{h, nil, schema.HashV1})
			default:
				return nil, fmt.Errorf("magnet btih %q: want 40 hex or 32 base32 characters", v)
			}
		case strings.HasPrefix(lx, "urn:btmh:1220"):
			v := xt[len("urn:btmh:1220"):]
			b, err := hex.DecodeString(v)
			if err != nil || len(b) != 32 {
				return nil, fmt.Errorf("magnet btmh %q: want 64 hex characters after 1220", v)
			}
			var h schema.Hash
			copy(h[:], b)
			add(magnetHash{h, b, schema.HashV2})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("magnet URI without a urn:btih or urn:btmh xt parameter")
	}
	return out, nil
}

// magneticoRecord is one line of a magnetico export (the tgragnato
// fork's --export: JSON Lines of {"infoHash": hex, "name": …, "files": […]}).
type magneticoRecord struct {
	InfoHash *string `json:"infoHash"`
}

func parseMagneticoLine(line string) (h schema.Hash, v2 []byte, typ int8, ok bool, err error) {
	var rec magneticoRecord
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		return h, nil, 0, false, fmt.Errorf("magnetico JSON line: %w", err)
	}
	if rec.InfoHash == nil {
		return h, nil, 0, false, fmt.Errorf("magnetico JSON line without \"infoHash\"")
	}
	h, v2, typ, err = schema.ParseHex(*rec.InfoHash)
	return h, v2, typ, err == nil, err
}

// readHashList reads a hash list, calling emit for each hash; errors name
// the line.
func readHashList(name string, r io.Reader, at int64, emit func(schema.Observation)) (int64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), maxLine)
	var n, lineNo int64
	for sc.Scan() {
		lineNo++
		line := sc.Bytes()
		if lineNo == 1 {
			line = bytes.TrimPrefix(line, utf8BOM)
		}
		// The usual line, 40 hex digits, without a string per line.
		if len(line) == 40 {
			var h schema.Hash
			if _, err := hex.Decode(h[:], line); err == nil {
				emit(schema.Observation{InfoHash: h, HashType: schema.HashV1, ObservedAt: at, Source: schema.SourceImport})
				n++
				continue
			}
		}
		if l := strings.TrimSpace(string(line)); len(l) > 7 && strings.EqualFold(l[:7], "magnet:") {
			// Every key a magnet names: both of a hybrid torrent's.
			hs, err := magnetHashes(l)
			if err != nil {
				return n, fmt.Errorf("%s:%d: %w", name, lineNo, err)
			}
			for _, m := range hs {
				emit(schema.Observation{InfoHash: m.h, InfoHashV2: m.v2, HashType: m.typ, ObservedAt: at, Source: schema.SourceImport})
				n++
			}
			continue
		}
		h, v2, typ, ok, err := ParseHashLine(string(line))
		if err != nil {
			return n, fmt.Errorf("%s:%d: %w", name, lineNo, err)
		}
		if !ok {
			continue
		}
		emit(schema.Observation{InfoHash: h, InfoHashV2: v2, HashType: typ, ObservedAt: at, Source: schema.SourceImport})
		n++
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return n, fmt.Errorf("%s:%d: line longer than %d bytes", name, lineNo+1, maxLine)
		}
		return n, fmt.Errorf("%s:%d: %w", name, lineNo+1, err)
	}
	return n, nil
}

// textSlice is how many lines of a hash list are folded at a time.
const textSlice = 1 << 16

// foldHashList reads a hash list into b a slice of lines at a time, each
// scattered by partition and folded by the workers with prefetching, as
// Parquet and Arrow rows are: folded line by line, every hash missed the
// cache, and the fold was half of a 2M-line list's time.
func foldHashList(name string, r io.Reader, at int64, b *batch) (int64, error) {
	var rows rgBuf
	var out recBuf
	k := 0
	rows.reset(textSlice, b) // every row's source is import
	flush := func() {
		rows.scatter(k, &out)
		b.srcView = b.srcs
		b.addRows(&out)
		k = 0
		rows.reset(textSlice, b)
	}
	n, err := readHashList(name, r, at, func(o schema.Observation) {
		rows.hashes[k], rows.at[k], rows.typ[k] = o.InfoHash, o.ObservedAt, o.HashType
		if o.InfoHashV2 != nil {
			rows.keepV2(k, o.InfoHashV2)
		}
		if k++; k == textSlice {
			flush()
		}
	})
	if err == nil && k > 0 {
		flush()
	}
	return n, err
}
