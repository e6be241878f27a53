package krpc

import "github.com/infohash/infohash/formats/bencode"

// Limits on untrusted input (libtorrent uses depth 10 and 500 tokens):
// lists and dictionaries nest at most MaxDepth deep, the packet's own
// dictionary counted, and a packet holds at most MaxTokens strings and
// integers, keys included.
const (
	MaxDepth  = 10
	MaxTokens = 1000
)

// Message types (the "y" key).
const (
	Query    byte = 'q'
	Response byte = 'r'
	Error    byte = 'e'
)

// Msg is a decoded KRPC message. Byte slices alias the packet buffer.
// Only the fields capture and fetch use are kept; others are checked and
// skipped.
type Msg struct {
	T   []byte // transaction ID
	TAt int    // where t's length prefix is in the packet; see ReplaceT
	Y   byte   // Query, Response or Error
	Q   []byte // query method

	// Query arguments ("a") or response values ("r").
	ID          []byte // sender's node ID (a.id or r.id)
	InfoHash    []byte // a.info_hash
	Target      []byte // a.target
	Token       []byte // a.token or r.token
	Port        int64  // a.port
	HasPort     bool
	ImpliedPort bool // a.implied_port != 0

	Nodes       []byte // r.nodes: compact IPv4 node infos, 26 bytes each
	NodesAt     int    // where r.nodes's length prefix is in the packet (0: no r.nodes); see TrimNodes
	Samples     []byte // r.samples: 20-byte infohashes (BEP 51)
	HasSamples  bool
	Num         int64 // r.num (BEP 51)
	Interval    int64 // r.interval (BEP 51)
	HasInterval bool

	ErrCode int64  // e[0]
	ErrMsg  []byte // e[1]
	RO      bool   // "ro": 1, read-only sender (BEP 43)
}

// SyntaxError is a malformed packet: what was wrong and at which byte. It
// is the bencode walker's error, also used for the KRPC checks.
type SyntaxError = bencode.SyntaxError

// IsMalformed reports whether err came from a malformed packet.
func IsMalformed(err error) bool { return bencode.IsSyntax(err) }

// limits are what KRPC tolerates: strings under 10 MB (a UDP packet is
// under 64 KB) and integers of at most 18 digits, as well as the caps
// above.
var limits = bencode.Limits{MaxDepth: MaxDepth, MaxValues: MaxTokens, MaxIntDigits: 18, MaxStringLen: 9_999_999}

// Parse decodes packet b into m (reset first). The packet must be one
// bencoded dictionary with no trailing bytes, carry "t" and a valid "y",
// and its known fields must have the right types and sizes. Keys may come
// in any order, as DHT nodes in the wild send them.
func Parse(b []byte, m *Msg) error {
	*m = Msg{}
	d := bencode.NewDecoder(b, limits)
	if err := d.Dict(); err != nil {
		return d.Fail("not a bencoded dictionary")
	}
	for !d.End() {
		key, err := d.String()
		if err != nil {
			return err
		}
		switch string(key) {
		case "t":
			m.TAt = d.Offset()
			m.T, err = d.String()
		case "y":
			var y []byte
			if y, err = d.String(); err == nil {
				if len(y) != 1 || (y[0] != Query && y[0] != Response && y[0] != Error) {
					return d.Fail("bad y")
				}
				m.Y = y[0]
			}
		case "q":
			m.Q, err = d.String()
		case "a", "r":
			err = fields(d, m, string(key) == "r")
		case "e":
			err = errList(d, m)
		case "ro":
			var v int64
			v, err = d.Int()
			m.RO = v != 0
		default:
			err = d.Skip()
		}
		if err != nil {
			return err
		}
	}
	if d.Offset() != len(b) {
		return d.Fail("trailing bytes")
	}
	switch {
	case m.T == nil:
		return d.Fail("no transaction id")
	case m.Y == 0:
		return d.Fail("no message type")
	case m.Y == Query && len(m.Q) == 0:
		return d.Fail("query without method")
	}
	return nil
}

// QueryID returns the transaction ID of a packet that Parse rejects but
// that is still a query (one dictionary, within the limits, with a "t"
// string and "y" "q"), for an error 203 reply (BEP 5: "malformed packet,
// invalid arguments"): a field of the wrong size or type, no method. ok
// is false for anything else, which gets no reply.
func QueryID(b []byte) (t []byte, ok bool) {
	d := bencode.NewDecoder(b, limits)
	if d.Dict() != nil {
		return nil, false
	}
	query := false
	for !d.End() {
		key, err := d.String()
		if err != nil {
			return nil, false
		}
		switch string(key) {
		case "t":
			t, err = d.String()
		case "y":
			var y []byte
			y, err = d.String()
			query = string(y) == "q"
		default:
			err = d.Skip()
		}
		if err != nil {
			return nil, false
		}
	}
	return t, t != nil && query && d.Offset() == len(b)
}

// fields decodes the dictionary "a" or "r" (inR).
func fields(d *bencode.Decoder, m *Msg, inR bool) error {
	if err := d.Dict(); err != nil {
		return err
	}
	for !d.End() {
		k, err := d.String()
		if err != nil {
			return err
		}
		if err := field(d, m, k, inR); err != nil {
			return err
		}
	}
	return nil
}

// field decodes the value of key k of "a" or "r" (inR). Nodes are kept
// from "r" only, where a response carries them (and where a DHT library
// reads them); an "a" that has some has them checked.
func field(d *bencode.Decoder, m *Msg, k []byte, inR bool) error {
	var err error
	switch string(k) {
	case "id":
		m.ID, err = fixed(d, "id")
	case "info_hash":
		m.InfoHash, err = fixed(d, "info_hash")
	case "target":
		m.Target, err = fixed(d, "target")
	case "token":
		m.Token, err = d.String()
	case "port":
		m.Port, err = d.Int()
		m.HasPort = err == nil
	case "implied_port":
		var v int64
		v, err = d.Int()
		m.ImpliedPort = v != 0
	case "nodes":
		at := d.Offset()
		var nodes []byte
		if nodes, err = d.String(); err == nil && len(nodes)%26 != 0 {
			return d.Fail("nodes not a multiple of 26 bytes")
		}
		if inR {
			m.Nodes, m.NodesAt = nodes, at
		}
	case "samples":
		if m.Samples, err = d.String(); err == nil && len(m.Samples)%20 != 0 {
			return d.Fail("samples not a multiple of 20 bytes")
		}
		m.HasSamples = err == nil
	case "num":
		m.Num, err = d.Int()
	case "interval":
		m.Interval, err = d.Int()
		m.HasInterval = err == nil
	default:
		err = d.Skip()
	}
	return err
}

// errList decodes the list "e": the error code, the message, and any
// further items, skipped.
func errList(d *bencode.Decoder, m *Msg) error {
	if err := d.List(); err != nil {
		return d.Fail("e is not a list")
	}
	for n := 0; !d.End(); n++ {
		var err error
		switch n {
		case 0:
			m.ErrCode, err = d.Int()
		case 1:
			m.ErrMsg, err = d.String()
		default:
			err = d.Skip()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// fixed reads a string of exactly 20 bytes.
func fixed(d *bencode.Decoder, what string) ([]byte, error) {
	s, err := d.String()
	if err == nil && len(s) != 20 {
		return nil, d.Fail(what + " is not 20 bytes")
	}
	return s, err
}
