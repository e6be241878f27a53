package capture

import (
	"crypto/rand"
	"crypto/sha1"
	"net/netip"
	"sync"
	"time"
)

// tokenRotation is how often the announce-token secret changes; a token
// stays valid for one rotation after the one it was made in (BEP 5 asks
// for about ten minutes in all).
const tokenRotation = 5 * time.Minute

// tokens makes and checks announce_peer tokens: SHA-1 of a rotating
// secret and the querier's IP, truncated to 8 bytes.
type tokens struct {
	mu      sync.Mutex
	cur     [20]byte
	prev    [20]byte
	rotated time.Time
}

func newTokens(now time.Time) *tokens {
	t := &tokens{rotated: now}
	rand.Read(t.cur[:])
	rand.Read(t.prev[:])
	return t
}

func (t *tokens) secrets(now time.Time) (cur, prev [20]byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if now.Sub(t.rotated) >= tokenRotation {
		t.prev = t.cur
		rand.Read(t.cur[:])
		t.rotated = now
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
