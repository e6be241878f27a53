// Package hashlist parses the lines of a hash list ("crawl this list"):
// hex infohashes, magnet URIs and magnetico's JSON export lines. dedup
// imports such lists as observations, fetch as jobs.
package hashlist

import (
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/infohash/infohash/formats/schema"
)

// ParseLine parses one line of a hash list: a 40/64-character hex
// infohash, a magnet URI (btih in hex or base32, or a btmh v2 multihash),
// or a JSON object of a magnetico export (its "infoHash" field).
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

// Hash is one infohash a line names.
type Hash struct {
	H    schema.Hash // the DHT key: a v2 hash truncated to 20 bytes
	V2   []byte      // a v2 hash's full 32 bytes, nil for v1
	Type int8        // schema.HashV1 or schema.HashV2
}

// MagnetHashes returns every infohash a magnet URI names, in order and
// each once: one, or two for a hybrid torrent (urn:btih and urn:btmh, two
// keys on the DHT).
func MagnetHashes(line string) ([]Hash, error) {
	u, err := url.Parse(line)
	if err != nil {
		return nil, fmt.Errorf("magnet URI: %w", err)
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
				add(Hash{h, v2, typ})
			case 32:
				b, err := base32.StdEncoding.DecodeString(strings.ToUpper(v))
				if err != nil {
					return nil, fmt.Errorf("magnet btih %q: bad base32", v)
				}
				var h schema.Hash
				copy(h[:], b)
				add(Hash{h, nil, schema.HashV1})
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
			add(Hash{h, b, schema.HashV2})
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
