package capture

import (
	"crypto/rand"
	"crypto/sha1"
	"net/netip"
	"sync"
	"time"
)

// tokenRotation is how often the announce-token secret changes; a token
// is valid in the rotation period it was made in and the next one: 5 to
// 10 minutes (BEP 5: tokens up to ten minutes old are accepted).
const tokenRotation = 5 * time.Minute

// tokens makes and checks announce_peer tokens: SHA-1 of a rotating
// secret and the querier's IP, truncated to 8 bytes. Periods are counted
// from start on the monotonic clock, so the secrets of periods that went
// by without a query are skipped, not carried over (rotating once per
// query-time check kept a token of any age valid after an idle spell).
type tokens struct {
	mu     sync.Mutex
	start  time.Time
	period int64 // of cur
	cur    [20]byte
	prev   [20]byte
}

func newTokens(now time.Time) *tokens {
	t := &tokens{start: now}
	rand.Read(t.cur[:])
	rand.Read(t.prev[:])
	return t
}

func (t *tokens) secrets(now time.Time) (cur, prev [20]byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch p := int64(now.Sub(t.start) / tokenRotation); {
	case p == t.period+1:
		t.prev = t.cur
		rand.Read(t.cur[:])
		t.period = p
	case p > t.period+1: // idle for a whole period or more: both are stale
		rand.Read(t.prev[:])
		rand.Read(t.cur[:])
		t.period = p
	}
	return t.cur, t.prev
}

func tokenFor(secret [20]byte, ip netip.Addr) [8]byte {
	var buf [20 + 16]byte
	copy(buf[:], secret[:])
	a := ip.As16()
	copy(buf[20:], a[:])
	sum := sha1.Sum(buf[:])
	return [8]byte(sum[:8])
}

// make returns the token for ip.
func (t *tokens) make(now time.Time, ip netip.Addr) [8]byte {
	cur, _ := t.secrets(now)
	return tokenFor(cur, ip)
}

// valid reports whether tok was made for ip recently.
func (t *tokens) valid(now time.Time, ip netip.Addr, tok []byte) bool {
	if len(tok) != 8 {
		return false
	}
	cur, prev := t.secrets(now)
	return tokenFor(cur, ip) == [8]byte(tok) || tokenFor(prev, ip) == [8]byte(tok)
}
