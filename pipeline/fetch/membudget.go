package fetch

import (
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
)

// memBudget counts the metadata bytes that exchanges hold, up to limit,
// and those the exchanges with each remote host hold, up to share.
//
// The share keeps one host from starving the others: a peer that
// announces --max-metadata-size and sends all of it but a piece holds
// that much until --peer-timeout, and one address may be dialled on up
// to maxPortsPerIP ports in each of many concurrent jobs, so a single
// host could otherwise hold the whole limit, and every honest exchange
// meanwhile ended local_error. A share of 2 x MaxMetadataSize lets one
// host serve two info dictionaries of the largest size at once (a
// seedbox with several large torrents is not starved), and limit/8,
// when larger, keeps the share from shrinking as the limit is raised:
// at the defaults (10 MiB, 256 MiB) it is 32 MiB, and it takes eight
// addresses to hold the whole limit. When that share would be the whole
// limit (a limit under twice MaxMetadataSize), there is none: only the
// limit bounds what one host holds.
//
// A host is an IPv4 address or an IPv6 /64 (hostBitsV4, hostBitsV6).
// One IPv6 host has a whole /64 to itself (SLAAC and its privacy
// addresses, a VPS's or a tunnel's allocation): counted per address, it
// could take any number of shares, and eight of them hold the whole
// limit. Grouping wider would make unrelated honest hosts share one
// share: an IPv4 /24 is a hosting provider's rack of seedboxes or a
// carrier-grade NAT's pool, and an IPv6 /48 or /56 a site's many
// subnets. An IPv4 address is one host, as fetch's maxPortsPerIP rule
// takes it. Loopback and private addresses are counted alike: the share
// bounds a host wherever it is. fetch dials an IPv6 peer only when
// --peer names it (internal/reach: found IPv6 peers are out of reach),
// so the /64 counts for those now, and for found ones once they are
// dialled.
type memBudget struct {
	limit   int64
	share   int64 // per remote host; 0 = none
	used    atomic.Int64
	refused atomic.Int64 // takes the limit refused so far (not the share)
	warned  atomic.Bool  // the run warned of it (Fetcher.warnMemory)

	// v4Bits and v6Bits are the prefix lengths of a host's network;
	// tests shorten v4Bits, for several loopback addresses to stand in
	// for the addresses of one IPv6 /64.
	v4Bits, v6Bits int

	mu     sync.Mutex // serialises take and give
	perNet map[netip.Prefix]int64
}

// hostBitsV4 and hostBitsV6 are the prefix lengths of one host's
// addresses, IPv4 and IPv6: what memBudget counts a share against.
const (
	hostBitsV4 = 32
	hostBitsV6 = 64
)

// newMemBudget is the budget of a run: limit (Options.MetadataMemory,
// at least maxMeta, Options.MaxMetadataSize) and the share of one
// remote address, the larger of 2 x maxMeta and limit/8.
func newMemBudget(limit, maxMeta int64) *memBudget {
	limit = max(limit, maxMeta)
	m := &memBudget{limit: limit, v4Bits: hostBitsV4, v6Bits: hostBitsV6}
	if share := max(2*maxMeta, limit/8); share < limit {
		m.share = share
	}
	return m
}

// memVerdict is what take says of a reservation.
type memVerdict uint8

const (
	memTaken  memVerdict = iota // reserved
	memShared                   // refused: ip's host's exchanges hold its share (the peer's doing)
	memFull                     // refused: all exchanges hold the limit (ours)
)

// host is the network of ip's host: its prefix of v4Bits or v6Bits (an
// IPv4-mapped IPv6 address is taken as IPv4; the zero Addr, a conn that
// is not TCP, is one host of its own).
func (m *memBudget) host(ip netip.Addr) netip.Prefix {
	ip = ip.Unmap()
	bits := m.v4Bits
	if ip.Is6() {
		bits = m.v6Bits
	}
	p, err := ip.Prefix(bits)
	if err != nil {
		return netip.Prefix{}
	}
	return p
}

// take reserves n bytes for an exchange with ip, unless the exchanges
// with ip's host would pass their share (memShared) or all exchanges the
// limit (memFull).
func (m *memBudget) take(ip netip.Addr, n int64) memVerdict {
	h := m.host(ip)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.share > 0 && m.perNet[h]+n > m.share {
		return memShared
	}
	if m.used.Load()+n > m.limit {
		m.refused.Add(1)
		return memFull
	}
	m.used.Add(n)
	if m.share > 0 {
		if m.perNet == nil {
			m.perNet = map[netip.Prefix]int64{}
		}
		m.perNet[h] += n
	}
	return memTaken
}

// give returns n bytes that take reserved for an exchange with ip.
func (m *memBudget) give(ip netip.Addr, n int64) {
	if n == 0 {
		return
	}
	h := m.host(ip)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.used.Add(-n)
	if m.share > 0 {
		if m.perNet[h] -= n; m.perNet[h] <= 0 {
			delete(m.perNet, h)
		}
	}
}

// held is what the exchanges with ip's host hold (0 without a share).
func (m *memBudget) held(ip netip.Addr) int64 {
	h := m.host(ip)
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.perNet[h]
}

// remoteIP is the address conn is connected to, whose share of the
// budget its exchange takes from (the zero Addr for a conn that is not
// TCP, as tests' pipes).
func remoteIP(conn net.Conn) netip.Addr {
	if a, ok := conn.RemoteAddr().(*net.TCPAddr); ok {
		return a.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}
