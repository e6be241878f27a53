package krpc

import (
	"errors"
	"fmt"
)

// Limits on untrusted input (libtorrent uses depth 10 and 500 tokens).
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
	T []byte // transaction ID
	Y byte   // Query, Response or Error
	Q []byte // query method

	// Query arguments ("a") or response values ("r").
	ID          []byte // sender's node ID (a.id or r.id)
	InfoHash    []byte // a.info_hash
	Target      []byte // a.target
	Token       []byte // a.token or r.token
	Port        int64  // a.port
	HasPort     bool
	ImpliedPort bool // a.implied_port != 0

	Nodes       []byte // r.nodes: compact IPv4 node infos, 26 bytes each
	Samples     []byte // r.samples: 20-byte infohashes (BEP 51)
	HasSamples  bool
	Num         int64 // r.num (BEP 51)
	Interval    int64 // r.interval (BEP 51)
	HasInterval bool

	ErrCode int64  // e[0]
	ErrMsg  []byte // e[1]
	RO      bool   // "ro": 1, read-only sender (BEP 43)
}

// SyntaxError is a malformed packet: what was wrong and at which byte.
type SyntaxError struct {
	Offset int
	What   string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("krpc: byte %d: %s", e.Offset, e.What) }

// IsMalformed reports whether err came from a malformed packet.
func IsMalformed(err error) bool {
	var se *SyntaxError
	return errors.As(err, &se)
}

type decoder struct {
	b      []byte
	i      int
	tokens int
}

func (d *decoder) fail(what string) error { return &SyntaxError{Offset: d.i, What: what} }

// Parse decodes packet b into m (reset first). The packet must be one
// bencoded dictionary with no trailing bytes, carry "t" and a valid "y",
// and its known fields must have the right types and sizes.
func Parse(b []byte, m *Msg) error {
	*m = Msg{}
	d := decoder{b: b}
	if len(b) == 0 || b[0] != 'd' {
		return d.fail("not a bencoded dictionary")
	}
	d.i = 1
	for {
		if d.i >= len(d.b) {
			return d.fail("unterminated dictionary")
		}
		if d.b[d.i] == 'e' {
			d.i++
			break
		}
		key, err := d.str()
		if err != nil {
			return err
		}
		switch string(key) {
		case "t":
			m.T, err = d.str()
		case "y":
			var y []byte
			if y, err = d.str(); err == nil {
				if len(y) != 1 || (y[0] != Query && y[0] != Response && y[0] != Error) {
					return d.fail("bad y")
				}
				m.Y = y[0]
			}
		case "q":
			m.Q, err = d.str()
		case "a", "r":
			err = d.dict(1, func(k []byte) error { return d.field(m, k) })
		case "e":
			err = d.errList(m)
		case "ro":
			var v int64
			v, err = d.int()
			m.RO = v != 0
		default:
			err = d.skip(1)
		}
		if err != nil {
			return err
		}
	}
	if d.i != len(d.b) {
		return d.fail("trailing bytes")
	}
	switch {
	case m.T == nil:
		return d.fail("no transaction id")
	case m.Y == 0:
		return d.fail("no message type")
	case m.Y == Query && len(m.Q) == 0:
		return d.fail("query without method")
	}
	return nil
}

// field decodes one key of "a" or "r".
func (d *decoder) field(m *Msg, k []byte) error {
	var err error
	switch string(k) {
	case "id":
		m.ID, err = d.fixed(20, "id")
	case "info_hash":
		m.InfoHash, err = d.fixed(20, "info_hash")
	case "target":
		m.Target, err = d.fixed(20, "target")
	case "token":
		m.Token, err = d.str()
	case "port":
		m.Port, err = d.int()
		m.HasPort = err == nil
	case "implied_port":
		var v int64
		v, err = d.int()
		m.ImpliedPort = v != 0
	case "nodes":
		if m.Nodes, err = d.str(); err == nil && len(m.Nodes)%26 != 0 {
			return d.fail("nodes not a multiple of 26 bytes")
		}
	case "samples":
		if m.Samples, err = d.str(); err == nil && len(m.Samples)%20 != 0 {
			return d.fail("samples not a multiple of 20 bytes")
		}
		m.HasSamples = err == nil
	case "num":
		m.Num, err = d.int()
	case "interval":
		m.Interval, err = d.int()
		m.HasInterval = err == nil
	default:
		err = d.skip(2)
	}
	return err
}

func (d *decoder) errList(m *Msg) error {
	if d.i >= len(d.b) || d.b[d.i] != 'l' {
		return d.fail("e is not a list")
	}
	d.i++
	for n := 0; ; n++ {
		if d.i >= len(d.b) {
			return d.fail("unterminated list")
		}
		if d.b[d.i] == 'e' {
			d.i++
			return nil
		}
		var err error
		switch n {
		case 0:
			m.ErrCode, err = d.int()
		case 1:
			m.ErrMsg, err = d.str()
		default:
			err = d.skip(2)
		}
		if err != nil {
			return err
		}
	}
}

// fixed reads a string of exactly n bytes.
func (d *decoder) fixed(n int, what string) ([]byte, error) {
	s, err := d.str()
	if err == nil && len(s) != n {
		return nil, d.fail(what + " is not 20 bytes")
	}
	return s, err
}

// dict walks a dictionary, calling f with each key; f must consume the
// value.
func (d *decoder) dict(depth int, f func(k []byte) error) error {
	if d.i >= len(d.b) || d.b[d.i] != 'd' {
		return d.fail("expected a dictionary")
	}
	if depth > MaxDepth {
		return d.fail("nested too deep")
	}
	d.i++
	for {
		if d.i >= len(d.b) {
			return d.fail("unterminated dictionary")
		}
		if d.b[d.i] == 'e' {
			d.i++
			return nil
		}
		k, err := d.str()
		if err != nil {
			return err
		}
		if err := f(k); err != nil {
			return err
		}
	}
}

// skip consumes one value of any type.
func (d *decoder) skip(depth int) error {
	if d.i >= len(d.b) {
		return d.fail("value expected")
	}
	switch c := d.b[d.i]; {
	case c == 'i':
		_, err := d.int()
		return err
	case c >= '0' && c <= '9':
		_, err := d.str()
		return err
	case c == 'd':
		return d.dict(depth+1, func([]byte) error { return d.skip(depth + 1) })
	case c == 'l':
		if depth+1 > MaxDepth {
			return d.fail("nested too deep")
		}
		d.i++
		for {
			if d.i >= len(d.b) {
				return d.fail("unterminated list")
			}
			if d.b[d.i] == 'e' {
				d.i++
				return nil
			}
			if err := d.skip(depth + 1); err != nil {
				return err
			}
		}
	default:
		return d.fail("invalid value")
	}
}

func (d *decoder) count() error {
	d.tokens++
	if d.tokens > MaxTokens {
		return d.fail("too many values")
	}
	return nil
}

// str reads a byte string "len:bytes".
func (d *decoder) str() ([]byte, error) {
	if err := d.count(); err != nil {
		return nil, err
	}
	n, j := 0, d.i
	for ; j < len(d.b) && d.b[j] != ':'; j++ {
		c := d.b[j]
		if c < '0' || c > '9' || j-d.i >= 7 || (j > d.i && d.b[d.i] == '0') {
			return nil, d.fail("bad string length")
		}
		n = n*10 + int(c-'0')
	}
	if j == d.i || j >= len(d.b) {
		return nil, d.fail("bad string length")
	}
	j++ // ':'
	if n > len(d.b)-j {
		return nil, d.fail("string runs past the packet")
	}
	d.i = j + n
	return d.b[j:d.i], nil
}

// int reads "i<digits>e" within int64 range (at most 18 digits).
func (d *decoder) int() (int64, error) {
	if err := d.count(); err != nil {
		return 0, err
	}
	if d.i >= len(d.b) || d.b[d.i] != 'i' {
		return 0, d.fail("expected an integer")
	}
	j := d.i + 1
	neg := j < len(d.b) && d.b[j] == '-'
	if neg {
		j++
	}
	start := j
	var v int64
	for ; j < len(d.b) && d.b[j] != 'e'; j++ {
		c := d.b[j]
		if c < '0' || c > '9' || j-start >= 18 {
			return 0, d.fail("bad integer")
		}
		v = v*10 + int64(c-'0')
	}
	if j == start || j >= len(d.b) || (d.b[start] == '0' && j-start > 1) || (neg && v == 0) {
		return 0, d.fail("bad integer")
	}
	d.i = j + 1
	if neg {
		v = -v
	}
	return v, nil
}
