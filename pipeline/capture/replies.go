package capture

import (
	"encoding/binary"
	"math/rand/v2"
	"net/netip"
	"sync"
	"time"

	"github.com/infohash/infohash/internal/reach"
)

// Replies to one public address are bounded. A DHT reply is larger than
// the query that asks for it (a sample_infohashes reply with 20 samples
// and 8 nodes is about 7 times the query's bytes, a get_peers or
// find_node reply about 3 times), and UDP sources can be forged: a node
// that answers every query reflects a flood at whoever's address the
// queries carry, and its host gets the abuse reports. libtorrent ignores
// an address that sends more than 5 queries a second
// (dht_block_ratelimit); capture still reads and records every query,
// but replies to one public address at most replyRate times a second
// (bursts of replyBurst), over all of a run's nodes: they share one
// limiter, so --node-ids K does not make K times the replies (each
// node's own bucket let a flood sent to all K ports draw K × 20 a
// second). Loopback is not limited: no other host can send from it (the
// kernel drops such packets), and the benchmark's load generator sends
// 50,000 queries a second from 127.0.0.1. Private addresses are not
// limited in a run pointed into a private range (internal/reach: its own
// network); in any other run they are, as public ones: a packet from the
// Internet can carry a forged private source (Linux's default loose
// reverse-path filter lets it in), and the replies went, unbounded, into
// the host's provider network.
const (
	replyRate  = 20
	replyBurst = 40
	replySlots = 1 << 13 // 128 KB per run
)

// replyLimiter is a token bucket per slot; the addresses that hash to a
// slot share it (a slot is busy only when its addresses are, on average
// 1/replySlots of the traffic). A run's nodes share it (runner.replies).
type replyLimiter struct {
	key   uint32 // odd: the multiplier of the address's slot hash
	limit func(netip.Addr) bool
	mu    sync.Mutex // the read loops of all nodes reply through it
	slots [replySlots]struct {
		tokens float64
		last   int64 // Unix ns of the last refill
	}
}

// newReplyLimiter bounds the replies of a run whose queries go where
// reachable says.
func newReplyLimiter(reachable reach.Rule) *replyLimiter {
	limit := func(a netip.Addr) bool {
		switch reach.ClassOf(a) {
		case reach.Loopback:
			return false
		case reach.Private:
			return !reachable.Private
		}
		return true
	}
	return &replyLimiter{key: rand.Uint32() | 1, limit: limit}
}

// allow reports whether a reply may go to a at now, and takes its token.
func (l *replyLimiter) allow(a netip.Addr, now time.Time) bool {
	if !l.limit(a) {
		return true
	}
	a4 := a.Unmap().As4()
	l.mu.Lock()
	defer l.mu.Unlock()
	s := &l.slots[(binary.BigEndian.Uint32(a4[:])*l.key)>>(32-13)]
	t := now.UnixNano()
	// A slot never used has last 0: it refills to the burst.
	s.tokens = min(replyBurst, s.tokens+float64(max(t-s.last, 0))/1e9*replyRate)
	s.last = t
	if s.tokens < 1 {
		return false
	}
	s.tokens--
	return true
}
