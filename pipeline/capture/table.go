package capture

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"slices"

	"github.com/anacrolix/dht/v2/krpc"
)

// contact is a DHT node we can send to.
type contact struct {
	ID   [20]byte
	Addr netip.AddrPort
}

// compact is the 26-byte BEP 5 encoding of c (IPv4 only).
func (c contact) compact() [26]byte {
	var b [26]byte
	copy(b[:20], c.ID[:])
	a4 := c.Addr.Addr().As4()
	copy(b[20:24], a4[:])
	binary.BigEndian.PutUint16(b[24:], c.Addr.Port())
	return b
}

// parseCompact splits r.nodes into contacts, skipping unusable entries
// (port 0, unspecified addresses).
func parseCompact(nodes []byte, f func(contact)) {
	for i := 0; i+26 <= len(nodes); i += 26 {
		var c contact
		copy(c.ID[:], nodes[i:i+20])
		ip := netip.AddrFrom4([4]byte(nodes[i+20 : i+24]))
		port := binary.BigEndian.Uint16(nodes[i+24 : i+26])
		if port == 0 || ip.IsUnspecified() || ip.IsMulticast() {
			continue
		}
		c.Addr = netip.AddrPortFrom(ip, port)
		f(c)
	}
}

// table is an immutable snapshot of a routing table, sorted by ID, for
// answering find_node and get_peers without touching the library's lock.
type table struct {
	ids  [][20]byte
	comp [][26]byte
}

func newTable(nis []krpc.NodeInfo) *table {
	cs := make([]contact, 0, len(nis))
	for _, ni := range nis {
		ip4 := ni.Addr.IP.To4()
		if ip4 == nil || ni.Addr.Port <= 0 || ni.Addr.Port > 65535 {
			continue
		}
		cs = append(cs, contact{ID: ni.ID, Addr: netip.AddrPortFrom(netip.AddrFrom4([4]byte(ip4)), uint16(ni.Addr.Port))})
	}
	slices.SortFunc(cs, func(a, b contact) int { return bytes.Compare(a.ID[:], b.ID[:]) })
	t := &table{}
	for _, c := range cs {
		t.ids = append(t.ids, c.ID)
		t.comp = append(t.comp, c.compact())
	}
	return t
}

func (t *table) len() int { return len(t.ids) }

// appendClosest appends the compact infos of the k nodes nearest to
// target. The XOR-nearest nodes share the longest prefixes with target, so
// they sit near its position in ID order: only a window of 2k nodes on
// each side is ranked. That is exact unless the subtree next to the
// target's holds more than 2k nodes of a real-sized table, and then the
// answer is still among the nearest few: good enough for a reply, and
// cheap (no full sort per query).
func (t *table) appendClosest(dst []byte, target []byte, k int) []byte {
	n := len(t.ids)
	if n == 0 {
		return dst
	}
	pos, _ := slices.BinarySearchFunc(t.ids, target, func(id [20]byte, tg []byte) int { return bytes.Compare(id[:], tg) })
	lo, hi := max(0, pos-2*k), min(n, pos+2*k)
	var idx [64]int
	cand := idx[:0]
	for i := lo; i < hi; i++ {
		cand = append(cand, i)
	}
	slices.SortFunc(cand, func(a, b int) int { return xorCmp(t.ids[a][:], t.ids[b][:], target) })
	for _, i := range cand[:min(k, len(cand))] {
		dst = append(dst, t.comp[i][:]...)
	}
	return dst
}

// xorCmp orders a and b by XOR distance to target.
func xorCmp(a, b, target []byte) int {
	for i := range target {
		da, db := a[i]^target[i], b[i]^target[i]
		if da != db {
			return int(da) - int(db)
		}
	}
	return 0
}
