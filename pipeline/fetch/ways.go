package fetch

import "sync"

// spoke is the way an endpoint last completed a handshake this run.
type spoke uint8

const (
	spokeUnknown spoke = iota
	spokePlain         // it answered a plaintext BEP 3 handshake
	spokeMSE           // it completed an MSE handshake
)

// maxWays bounds the endpoints a run remembers; past it the memory
// starts afresh (what it forgets costs a retry, never a wrong outcome).
const maxWays = 1 << 16

// ways remembers, for the run, which way each endpoint spoke, so that an
// exchange with it starts that way and is not retried the other way for
// a hang-up: a plaintext peer that hangs up on a hash it lacks is not
// dialled again over MSE, and a peer that required MSE is spoken to over
// MSE at once. Its zero value is ready; nil remembers nothing.
type ways struct {
	mu sync.Mutex
	m  map[string]spoke
}

func (w *ways) get(addr string) spoke {
	if w == nil {
		return spokeUnknown
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.m[addr]
}

func (w *ways) set(addr string, s spoke) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil || len(w.m) >= maxWays {
		w.m = map[string]spoke{}
	}
	w.m[addr] = s
}

// learn records the way o's exchange with its peer got through a
// handshake, if it did.
func (w *ways) learn(o *peerOutcome) {
	switch {
	case o.Crypto != 0:
		w.set(o.Addr, spokeMSE)
	case o.SpokePlain:
		w.set(o.Addr, spokePlain)
	}
}
