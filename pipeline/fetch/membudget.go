package fetch

import (
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
)

// memBudget counts the metadata bytes that exchanges hold, up to limit,
// and those the exchanges with each remote address hold, up to share.
//
// The share keeps one address from starving the others: a peer that
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
// limit bounds what one address holds.
type memBudget struct {
	limit   int64
	share   int64 // per remote address; 0 = none
	used    atomic.Int64
	refused atomic.Int64 // takes the limit refused so far (not the share)
	warned  atomic.Bool  // the run warned of it (Fetcher.warnMemory)

	mu    sync.Mutex // serialises take and give
	perIP map[netip.Addr]int64
}

// newMemBudget is the budget of a run: limit (Options.MetadataMemory,
// at least maxMeta, Options.MaxMetadataSize) and the share of one
// remote address, the larger of 2 x maxMeta and limit/8.
func newMemBudget(limit, maxMeta int64) *memBudget {
	limit = max(limit, maxMeta)
	m := &memBudget{limit: limit}
	if share := max(2*maxMeta, limit/8); share < limit {
		m.share = share
	}
	return m
}

// memVerdict is what take says of a reservation.
type memVerdict uint8

const (
	memTaken  memVerdict = iota // reserved
	memShared                   // refused: ip's exchanges hold its share (the peer's doing)
	memFull                     // refused: all exchanges hold the limit (ours)
)

// take reserves n bytes for an exchange with ip, unless ip's exchanges
// would pass their share (memShared) or all exchanges the limit
// (memFull).
func (m *memBudget) take(ip netip.Addr, n int64) memVerdict {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.share > 0 && m.perIP[ip]+n > m.share {
		return memShared
	}
	if m.used.Load()+n > m.limit {
		m.refused.Add(1)
		return memFull
	}
	m.used.Add(n)
	if m.share > 0 {
		if m.perIP == nil {
			m.perIP = map[netip.Addr]int64{}
		}
		m.perIP[ip] += n
	}
	return memTaken
}

// give returns n bytes that take reserved for an exchange with ip.
func (m *memBudget) give(ip netip.Addr, n int64) {
	if n == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.used.Add(-n)
	if m.share > 0 {
		if m.perIP[ip] -= n; m.perIP[ip] <= 0 {
			delete(m.perIP, ip)
		}
	}
}

// held is what the exchanges with ip hold (0 without a share).
func (m *memBudget) held(ip netip.Addr) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.perIP[ip]
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
