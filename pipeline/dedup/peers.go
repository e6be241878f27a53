// Announced peers: an announce_peer observation says its sender has the
// hash (node_addr's IP, and the port it announced, peer_port). The batch
// keeps, per hash, the newest few distinct ones, and the state's peers
// list takes them, newest first, ahead of those it knew.

package dedup

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net/netip"
	"slices"
	"unsafe"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// peerRec is one announcement folded into a partition's table: the
// aggregate's index there, the endpoint (an IPv4 address, or the index of
// an IPv6 one in batch.peers6; the port) and when (observed_at: whole
// seconds in sec, the milliseconds past them in sub). 16 bytes and no
// per-endpoint memory: an input can hold millions of announcements,
// mostly from distinct endpoints.
type peerRec struct {
	idx  uint32
	addr uint32
	port uint16
	sub  uint16 // bits 0-9: the milliseconds past sec; subV6: addr is an IPv6 address's index
	sec  uint32
}

// subV6 is the bit of peerRec.sub set for an IPv6 endpoint.
const subV6 = 1 << 15

// newPeerRec is the record of aggregate i's announcement of endpoint e
// at time at (ms; clamped to what sec holds, 1970 to 2106).
func newPeerRec(i uint32, e endpoint, at int64) peerRec {
	sec := min(max(at/1000, 0), math.MaxUint32)
	p := peerRec{idx: i, addr: uint32(e), port: uint16(e >> 32), sec: uint32(sec),
		sub: uint16(min(max(at-sec*1000, 0), 999))}
	if e&epV6 != 0 {
		p.sub |= subV6
	}
	return p
}

// v6 reports whether p's addr is the index of an IPv6 address.
func (p peerRec) v6() bool { return p.sub&subV6 != 0 }

// at is when p was announced (ms).
func (p peerRec) at() int64 { return int64(p.sec)*1000 + int64(p.sub&^subV6) }

// endpoint packs an announced endpoint in 64 bits, 0 for none: bit 63
// set, bit 48 for IPv6, the port in bits 32-47, and the IPv4 address (or
// the index in batch.peers6) in bits 0-31.
type endpoint uint64

const (
	epSet endpoint = 1 << 63
	epV6  endpoint = 1 << 48
)

// peerEndpoint is the endpoint an announce_peer row names: the sender's
// IP (node_addr, "ip:port" as capture writes it) with the announced port
// (capture has already resolved BEP 5's implied_port to the UDP source
// port). ok is false for a value that names no dialable peer: no
// address, port 0, an unspecified, multicast or broadcast IP (fetch would
// not dial it).
func peerEndpoint(nodeAddr []byte, port int32) (netip.AddrPort, bool) {
	if port <= 0 || port > 65535 || len(nodeAddr) == 0 || len(nodeAddr) > 64 {
		return netip.AddrPort{}, false
	}
	ap, err := netip.ParseAddrPort(unsafe.String(unsafe.SliceData(nodeAddr), len(nodeAddr)))
	if err != nil {
		return netip.AddrPort{}, false
	}
	ip := ap.Addr().Unmap().WithZone("")
	if ip.IsUnspecified() || ip.IsMulticast() || ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(ip, uint16(port)), true
}

// endpointOf packs ap; an IPv6 address is interned in b.peers6. Only the
// decoding goroutine calls it (inputs are read one at a time).
func (b *batch) endpointOf(ap netip.AddrPort) endpoint {
	e := epSet | endpoint(ap.Port())<<32
	if ip := ap.Addr(); ip.Is4() {
		a := ip.As4()
		return e | endpoint(binary.BigEndian.Uint32(a[:]))
	}
	id, ok := b.peer6ID[ap.Addr()]
	if !ok {
		if b.peer6ID == nil {
			b.peer6ID = map[netip.Addr]uint32{}
		}
		id = uint32(len(b.peers6))
		b.peers6 = append(b.peers6, ap.Addr())
		b.peer6ID[ap.Addr()] = id
	}
	return e | epV6 | endpoint(id)
}

// appendPeer appends p's endpoint as ip:port to dst.
func (b *batch) appendPeer(dst []byte, p peerRec) []byte {
	var a [4]byte
	binary.BigEndian.PutUint32(a[:], p.addr)
	ip := netip.AddrFrom4(a)
	if p.v6() {
		ip = b.peers6[p.addr]
	}
	return netip.AddrPortFrom(ip, p.port).AppendTo(dst)
}

// notePeer records that row (an announce_peer) names the endpoint of
// nodeAddr and port; a row naming none is left without.
func (r *rgBuf) notePeer(row int, nodeAddr []byte, port int32, b *batch) {
	ap, ok := peerEndpoint(nodeAddr, port)
	if !ok {
		return
	}
	if !r.hasPeers {
		r.hasPeers = true
		r.peer = resize(r.peer, len(r.hashes))
		clear(r.peer)
	}
	r.peer[row] = b.endpointOf(ap)
}

// nodeAddrPage reads a node_addr column for the rows that announced a
// port as announce_peer (read after source and peer_port).
func (r *rgBuf) nodeAddrPage(b *batch) func(p parquet.Page) (func(row, v, n int), error) {
	return func(p parquet.Page) (func(row, v, n int), error) {
		data, offs, idx, err := byteArrays(p)
		if err != nil {
			return nil, err
		}
		return func(row, v, n int) {
			for i := range n {
				k := row + i
				if r.port[k] <= 0 || r.src[k] != b.announce { // none, or null (nullPort)
					continue
				}
				j := v + i
				if idx != nil {
					j = int(idx[j])
				}
				r.notePeer(k, data[offs[j]:offs[j+1]], r.port[k], b)
			}
		}, nil
	}
}

// peerColumns returns the peer_port and node_addr columns of an input
// when both are what capture writes, or near it (portBeside, peer_port
// an integer: INT32 or INT64 of any logical type), as arrowPeerColumns
// takes an Arrow stream's; else neither, and the input's announced peers
// are not read (a run that keeps them refuses a peer_port of another
// type or without those columns beside it: checkPeerPort). An INT64 or
// UINTEGER peer_port is read by value (portPageFor, rowPeerReader).
func peerColumns(root *parquet.Column, flat func(*parquet.Column) bool) (port, addr *parquet.Column) {
	port, addr = portBeside(root, flat)
	if port == nil {
		return nil, nil
	}
	if k := port.Type().Kind(); k != parquet.Int32 && k != parquet.Int64 {
		return nil, nil
	}
	return port, addr
}

// portBeside returns the peer_port and node_addr columns of an input,
// peer_port of whatever type, when announced peers would be read from
// them: both flat, node_addr a BYTE_ARRAY, beside a source column (as
// arrowPortBeside finds an Arrow stream's); else neither.
func portBeside(root *parquet.Column, flat func(*parquet.Column) bool) (port, addr *parquet.Column) {
	port, addr = root.Column("peer_port"), root.Column("node_addr")
	if port == nil || addr == nil || root.Column("source") == nil || !flat(port) || !flat(addr) ||
		addr.Type().Kind() != parquet.ByteArray {
		return nil, nil
	}
	return port, addr
}

// scatterPeers places the endpoints of the n rows as scatter placed the
// rows (by the partition bounds counts), if any row has one.
func (r *rgBuf) scatterPeers(n int, counts *[257]int32, out *recBuf) {
	out.peer = out.peer[:0]
	if !r.hasPeers {
		return
	}
	out.peer = resize(out.peer, n)
	next := *counts
	for i := 0; i < n; i++ {
		k := next[r.hashes[i][0]]
		next[r.hashes[i][0]]++
		out.peer[k] = r.peer[i]
	}
}

// addPeer adds an announcement of a's hash (aggregate i of t, just
// folded) by endpoint e at time at (ms). Only the worker folding t's
// partition calls it.
func (t *table) addPeer(a *agg, i int, e endpoint, at int64) {
	a.flags |= aggPeers
	t.peers = append(t.peers, newPeerRec(uint32(i), e, at))
	if len(t.peers) >= 2*t.peersKept+4096 {
		t.compactPeers()
	}
}

// compactPeers keeps, per aggregate, its schema.MaxStatePeers newest
// distinct endpoints, grouped by aggregate (a counting sort by index),
// newest first: the records of a partition take at most 16 bytes times 8
// a hash, however many announcements an input holds. peerAt then gives
// each aggregate's records.
func (t *table) compactPeers() {
	n := t.n
	at := resize(t.peerAt, n+1)
	clear(at)
	for _, p := range t.peers {
		at[p.idx+1]++
	}
	for k := 1; k <= n; k++ {
		at[k] += at[k-1]
	}
	byAgg := make([]peerRec, len(t.peers))
	for _, p := range t.peers {
		byAgg[at[p.idx]] = p
		at[p.idx]++ // at[k] ends as the end of k's group
	}
	// Compacted in place: a group's survivors land at or before where
	// the group began. The old array goes (no scratch kept: that would
	// double the records' memory).
	out := byAgg[:0]
	lo := int32(0)
	for k := 0; k < n; k++ {
		hi := at[k]
		at[k] = int32(len(out))
		if g := byAgg[lo:hi]; len(g) > 0 {
			sortFew(g, 32, newerPeer) // insertion sort for the usual few
			kept := 0
			for _, p := range g {
				if kept == schema.MaxStatePeers {
					break
				}
				if !slices.ContainsFunc(out[len(out)-kept:], func(q peerRec) bool { return q.endpoint() == p.endpoint() }) {
					out = append(out, p)
					kept++
				}
			}
		}
		lo = hi
	}
	at[n] = int32(len(out))
	t.peers, t.peerAt = out, at
	t.peersKept = len(out)
}

// newerPeer orders one aggregate's records newest first, ties by endpoint.
func newerPeer(x, y peerRec) bool {
	return x.at() > y.at() || (x.at() == y.at() && x.endpoint() < y.endpoint())
}

// finishPeers readies partition p's announcements for peersOf: called by
// the worker applying p, before it reads them.
func (b *batch) finishPeers(p byte) {
	if t := &b.parts[p]; len(t.peers) > 0 && len(t.peers) != t.peersKept {
		t.compactPeers()
	}
}

// hasPeers reports whether the batch saw an announced peer of partition p.
func (b *batch) hasPeers(p byte) bool { return len(b.parts[p].peers) > 0 }

// peersOf returns the endpoints announced for a's hash in the batch,
// newest first, and when the newest was announced (nil, 0 if none;
// finishPeers must have run for its partition). A hash without any costs
// a flag test.
func (b *batch) peersOf(a *agg) (_ []string, newest int64) {
	if a.flags&aggPeers == 0 {
		return nil, 0
	}
	t := &b.parts[a.h[0]]
	i, ok := t.index(&a.h)
	if !ok {
		return nil, 0
	}
	if i+1 >= len(t.peerAt) {
		return nil, 0
	}
	recs := t.peers[t.peerAt[i]:t.peerAt[i+1]]
	if len(recs) == 0 {
		return nil, 0
	}
	// Two allocations a hash: the endpoints rendered into one array, the
	// strings carved from it once it no longer grows.
	var offs [schema.MaxStatePeers + 1]int
	text := make([]byte, 0, 22*len(recs))
	for j, p := range recs {
		text = b.appendPeer(text, p)
		offs[j+1] = len(text)
	}
	out := make([]string, len(recs))
	for j := range out {
		out[j] = unsafe.String(&text[offs[j]], offs[j+1]-offs[j])
	}
	return out, recs[0].at()
}

// foldPeers puts the endpoints announced for a's hash in the batch ahead
// of those st knew (mergePeers), and keeps in peers_at the time of the
// newest announcement that put or kept one there: the batch's newest, or
// st's own if later (an input of older announcements read late). A hash
// without any keeps both.
func (b *batch) foldPeers(st *schema.State, a *agg) {
	if fresh, newest := b.peersOf(a); len(fresh) > 0 {
		st.Peers, st.PeersAt = mergePeers(fresh, st.Peers), max(st.PeersAt, newest)
	}
}

// endpoint is p's endpoint, packed.
func (p peerRec) endpoint() endpoint {
	e := epSet | endpoint(p.port)<<32 | endpoint(p.addr)
	if p.v6() {
		e |= epV6
	}
	return e
}

// mergePeers returns the batch's endpoints (fresh, newest first) ahead of
// those known before (old), each once, at most schema.MaxStatePeers.
func mergePeers(fresh, old []string) []string {
	if len(fresh) == 0 {
		return old
	}
	out := slices.Clone(fresh)
	for _, p := range old {
		if len(out) == schema.MaxStatePeers {
			break
		}
		if !slices.Contains(fresh, p) {
			out = append(out, p)
		}
	}
	return out
}

// index is the index of h's aggregate in t, if h has one (it inserts
// nothing).
func (t *table) index(h *schema.Hash) (int, bool) {
	if t.nslots == 0 {
		return 0, false
	}
	mask := uint64(t.nslots - 1)
	k := slotKey(h)
	for i := k & mask; ; i = (i + 1) & mask {
		s := t.slot(i)
		if s == 0 {
			return 0, false
		}
		if a := t.at(s - 1); a.h == *h {
			return s - 1, true
		}
	}
}

// rowPeerReader reads the endpoint columns of a Parquet input beside the
// row reader (readParquet), row for row; nil when the run keeps no
// announced peers or the input lacks the columns peerColumns takes (as
// for the column reader: not read).
//
// peer_port is read by value, into an int64 (peerIn), as the column
// reader reads it (portValue): a value past int32 (a UINTEGER's 2^32-1,
// an INT64's 2^40, a UBIGINT's 2^64-1, whose bits make a negative int64)
// is no port, as 70000 is, and so is one past the column's width (lim).
type rowPeerReader struct {
	r   *parquet.GenericReader[peerIn]
	buf []peerIn
	lim portLimit
}

func rowPeers(pf *parquet.File, b *batch) *rowPeerReader {
	flat := func(c *parquet.Column) bool {
		return c.Leaf() && c.MaxRepetitionLevel() == 0 && c.MaxDefinitionLevel() <= 1
	}
	if b.noPeers {
		return nil
	}
	port, _ := peerColumns(pf.Root(), flat)
	if port == nil {
		return nil
	}
	return &rowPeerReader{r: parquet.NewGenericReader[peerIn](pf), buf: make([]peerIn, readBatch),
		lim: portLimitOf(port.Type())}
}

// read reads the endpoints of the next n rows, those the row reader just
// read: a failure is a CorruptError.
func (p *rowPeerReader) read(n int) error {
	if p == nil {
		return nil
	}
	if err := p.readRows(n); err != nil {
		return &rowio.CorruptError{Format: "Parquet", Err: err}
	}
	return nil
}

// readRows reads the next n rows into buf.
func (p *rowPeerReader) readRows(n int) error {
	buf := p.buf[:n]
	clear(buf) // a null node_addr must read as nil, not as a reused row's
	for got := 0; got < n; {
		k, err := p.r.Read(buf[got:])
		got += k
		switch {
		case got == n:
		case errors.Is(err, io.EOF):
			return fmt.Errorf("node_addr, peer_port: fewer rows than the other columns")
		case err != nil:
			return fmt.Errorf("node_addr, peer_port: %w", err)
		case k == 0:
			return fmt.Errorf("node_addr, peer_port: no rows read")
		}
	}
	return nil
}

// add folds the endpoint of row i of the rows read last, o (just folded
// by addRow), as addRowPeer does; a null port names none, and is counted
// in an announce_peer row (noport.go).
func (p *rowPeerReader) add(i int, o *obsIn, b *batch) {
	switch {
	case p == nil:
	case p.buf[i].PeerPort != nil:
		b.addRowPeer(o, p.buf[i].NodeAddr, *p.buf[i].PeerPort, p.lim)
	case o.Source == schema.SourceAnnouncePeer:
		b.ports.noPortRow()
	}
}

// addRowPeer adds the endpoint (nodeAddr, port: a non-null value of
// peer_port, widened) to the aggregate of o's hash if o (a row addRow
// just folded: its time as the batch took it) is an announce_peer naming
// a dialable one: the row readers' way of what foldRecs does with the
// column readers' endpoints. A port that is no port (portValue), or none
// under l, is a bad port (badports.go).
func (b *batch) addRowPeer(o *obsIn, nodeAddr []byte, port int64, l portLimit) {
	if o.Source != schema.SourceAnnouncePeer {
		return
	}
	p := portValue(port)
	if !l.ok(p) {
		b.ports.bad()
		return
	}
	ap, ok := peerEndpoint(nodeAddr, p)
	if !ok {
		return
	}
	var h schema.Hash
	copy(h[:], o.InfoHash)
	t := &b.parts[h[0]]
	if k, ok := t.index(&h); ok {
		t.addPeer(t.at(k), k, b.endpointOf(ap), o.ObservedAt)
	}
}

func (p *rowPeerReader) close() {
	if p != nil {
		p.r.Close()
	}
}
