package fetch

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"time"

	"github.com/anacrolix/dht/v2"

	"github.com/infohash/infohash/internal/dhtwalk"
)

// resolveNodes resolves bootstrap host:port strings; names that do not
// resolve are skipped.
func resolveNodes(hostPorts []string) ([]dht.Addr, error) {
	var addrs []dht.Addr
	var lastErr error
	for _, hp := range hostPorts {
		ua, err := net.ResolveUDPAddr("udp", hp)
		if err != nil {
			lastErr = err
			continue
		}
		addrs = append(addrs, dht.NewAddr(ua))
	}
	if len(addrs) == 0 {
		if lastErr == nil {
			lastErr = errors.New("no bootstrap nodes")
		}
		return nil, lastErr
	}
	return addrs, nil
}

// peerValue returns a get_peers value as an address, or false when it is
// none (no IP address, a port outside 0-65535). Whether it may be dialled
// is the run's reach rule's to say (attempt.add): it refuses port 0, the
// unspecified address (dialling it reaches our own host), multicast,
// broadcast, and loopback and private addresses unless the run was
// pointed there. Such values come from broken or lying DHT nodes.
func peerValue(ip net.IP, port int) (netip.AddrPort, bool) {
	a, ok := netip.AddrFromSlice(ip)
	if !ok || port < 0 || port > 65535 {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(a.Unmap(), uint16(port)), true
}

// lookupRun is one get_peers traversal in progress. Peers arrive on peers;
// done is closed when the traversal has ended, after which err, responses
// and took are set.
type lookupRun struct {
	peers     chan []string
	done      chan struct{}
	err       error
	queried   uint32 // DHT nodes queried
	responses uint32 // answers received
	took      time.Duration
}

// lookup starts a get_peers traversal for ih that ends when it stalls or
// when ctx ends.
func (n *dhtNode) lookup(ctx context.Context, ih [20]byte) *lookupRun {
	lr := &lookupRun{peers: make(chan []string), done: make(chan struct{})}
	start := time.Now()
	go func() {
		defer close(lr.done)
		defer func() { lr.took = time.Since(start) }()
		w, err := dhtwalk.Start(n.s, ih)
		if err != nil {
			lr.err = err
			return
		}
		stopped := false
		stop := func() {
			if !stopped {
				stopped = true
				w.Stop()
			}
		}
		for {
			var pv dht.PeersValues
			var ok bool
			select {
			case pv, ok = <-w.Peers:
			case <-ctx.Done():
				stop()
				// Drain until the walk closes the channel.
				for range w.Peers {
				}
			}
			if !ok {
				break
			}
			if len(pv.Peers) == 0 || stopped {
				continue
			}
			addrs := make([]string, 0, len(pv.Peers))
			for _, p := range pv.Peers {
				if ap, ok := peerValue(p.IP, p.Port); ok {
					addrs = append(addrs, ap.String())
				}
			}
			select {
			case lr.peers <- addrs:
			case <-ctx.Done():
			}
		}
		stop()
		ts := w.Stats()
		lr.queried, lr.responses = ts.NumAddrsTried, ts.NumResponses
	}()
	return lr
}
