// Announced peers from an Arrow stream (see peers.go): peer_port of any
// integer type, read by value as the Parquet readers read it. A
// dictionary-encoded one is checked as its values' type: rowio decodes it
// into a plain column before dedup sees the schema or a batch (a
// dictionary of integers is read and range-checked as they are, one of
// anything else is the wrong schema: TestArrowDictionaryPeerPort).

package dedup

import (
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/infohash/infohash/formats/rowio"
)

// arrowPeerColumns is the index of s's peer_port column when it is an
// integer (of any width, signed or not) and node_addr text or a BLOB,
// beside a source column, else -1. Announced peers are read from these
// columns only then, by either reader: a run that keeps them refuses any
// other peer_port but a null-typed one (arrowPortTypeError).
func arrowPeerColumns(s *arrow.Schema) int {
	if i := arrowPortBeside(s); i >= 0 && arrowInt(s.Field(i).Type.ID()) {
		return i
	}
	return -1
}

// arrowPortBeside is the index of s's peer_port column, whatever its
// type, when node_addr is text (or a BLOB: binary, read as text) beside a
// source column (announced peers would be read from it), else -1.
func arrowPortBeside(s *arrow.Schema) int {
	index := func(name string) int { i, _ := rowio.FieldIndex(s, name); return i } // as arrowLayoutOf's
	port, addr := index("peer_port"), index("node_addr")
	if port < 0 || addr < 0 || index("source") < 0 || !arrowAddrType(s.Field(addr).Type.ID()) {
		return -1
	}
	return port
}

// arrowAddrType reports whether a node_addr of type t is read: text, or
// a BLOB (binary, large_binary, binary_view), read as text as a Parquet
// BYTE_ARRAY is; not fixed_size_binary, as Parquet's FIXED_LEN_BYTE_ARRAY
// is not.
func arrowAddrType(t arrow.Type) bool {
	return rowio.IsArrowString(t) || (rowio.IsArrowBinary(t) && t != arrow.FIXED_SIZE_BINARY)
}

// arrowPortTypeError checks, for a run that keeps announced peers, the
// columns of s they are read from, as checkPeerPort checks a Parquet
// file's: a peer_port needs to be an integer (a float, text, binary, a
// bool, a date, a time, a timestamp, a decimal, a struct or a list was
// silently not read: a date32 one, whose Parquet DATE twin was read as
// ports), beside a node_addr of text (or a BLOB) and a source column
// (without them, the stream's peers were silently not read). A
// null-typed peer_port (all null: no port at all), or none, is not read,
// nor refused.
func arrowPortTypeError(s *arrow.Schema) error {
	index := func(name string) int { i, _ := rowio.FieldIndex(s, name); return i }
	i := index("peer_port")
	if i < 0 || s.Field(i).Type.ID() == arrow.NULL {
		return nil
	}
	if t := s.Field(i).Type; !arrowInt(t.ID()) {
		return &arrowTypeError{name: "peer_port", typ: t, want: obsTypes["peer_port"]}
	}
	a := index("node_addr")
	switch {
	case a < 0:
		return errNoNodeAddr
	case !arrowAddrType(s.Field(a).Type.ID()):
		return &arrowTypeError{name: "node_addr", typ: s.Field(a).Type, want: `text ("ip:port") or a BLOB (binary)`}
	case index("source") < 0:
		return errNoSource
	}
	return nil
}

// arrowInt reports whether t is an Arrow integer type.
func arrowInt(t arrow.Type) bool {
	switch t {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return true
	}
	return false
}

// loadArrowPeers notes the endpoints the announce_peer rows of rec name,
// and counts those whose peer_port is null (noport.go).
// peer_port is read as both Parquet readers read it, by value
// (portValue): one that is no port (0, negative, past 65535, past int32)
// names no endpoint and is counted as a bad port (badports.go), whatever
// node_addr holds.
func (r *rgBuf) loadArrowPeers(rec arrow.Record, l arrowLayout, b *batch) {
	if l.port < 0 {
		return
	}
	c := rec.Column(l.port)
	if c.NullN() == c.Len() { // no port in any row
		for i := range c.Len() {
			if r.src[i] == b.announce {
				b.ports.noPortRow()
			}
		}
		return
	}
	ports := r.arrowPorts(c)
	addrs := rec.Column(l.addr)
	strs, _ := addrs.(interface{ Value(int) string })  // text
	blobs, _ := addrs.(interface{ Value(int) []byte }) // a BLOB, read as text (arrowAddrType)
	for i := range int(rec.NumRows()) {
		if r.src[i] != b.announce {
			continue
		}
		switch p := ports[i]; {
		case c.IsNull(i):
			b.ports.noPortRow()
		case !anyPort.ok(p):
			b.ports.bad()
		case addrs.IsNull(i):
		case strs != nil:
			s := strs.Value(i)
			r.notePeer(i, unsafe.Slice(unsafe.StringData(s), len(s)), p, b)
		case blobs != nil:
			r.notePeer(i, blobs.Value(i), p, b)
		}
	}
}

// arrowPorts is c, an Arrow integer column, as int32s: an int32 column's
// own values, others' copied into r.port by value (portValue: 0 for one
// that is no port); a null row's is any value.
func (r *rgBuf) arrowPorts(c arrow.Array) []int32 {
	switch a := c.(type) {
	case *array.Int32:
		return a.Int32Values()
	case *array.Int8:
		return portsOf(r, a.Int8Values())
	case *array.Int16:
		return portsOf(r, a.Int16Values())
	case *array.Int64:
		return portsOf(r, a.Int64Values())
	case *array.Uint8:
		return portsOf(r, a.Uint8Values())
	case *array.Uint16:
		return portsOf(r, a.Uint16Values())
	case *array.Uint32:
		return portsOf(r, a.Uint32Values())
	case *array.Uint64:
		return portsOf(r, a.Uint64Values())
	}
	return nil // arrowPeerColumns takes integers only
}

// portsOf copies vals into r.port as portValue reads them.
func portsOf[T int8 | int16 | int64 | uint8 | uint16 | uint32 | uint64](r *rgBuf, vals []T) []int32 {
	r.port = resize(r.port, len(vals))
	for i, v := range vals {
		r.port[i] = portValue(int64(v))
	}
	return r.port
}
