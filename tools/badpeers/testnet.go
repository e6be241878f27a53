package badpeers

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"

	"github.com/infohash/infohash/tools/testnet"
)

// truthPrefix starts the testnet ground-truth kind of planted peers:
// "badpeer_" + behaviour.
const truthPrefix = "badpeer_"

// TruthKind is the testnet ground-truth kind under which hashes served by
// a peer of behaviour b are recorded.
func TruthKind(b Behaviour) string { return truthPrefix + string(b) }

// Plant announces each torrent's hash through the testnet's DHT with p
// as its only peer and records it in the ground truth under TruthKind. A
// Good or RequireMSE peer is given the torrents to serve.
func Plant(ctx context.Context, n *testnet.Net, p *Peer, ts []Torrent) error {
	if p.behaviour == Good || p.behaviour == RequireMSE {
		p.Add(ts...)
	}
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for _, t := range ts {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			err := n.Announce(ctx, t.InfoHash, p.TCPAddr())
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if first == nil {
					first = fmt.Errorf("badpeers: plant %s: %w", p.behaviour, err)
				}
				return
			}
			n.AddTruth(TruthKind(p.behaviour), testnet.TruthEntry{
				InfoHash: hex.EncodeToString(t.InfoHash[:]), Peers: []string{p.Addr()},
				Name: t.Name, InfoSize: len(t.Info),
			})
		})
	}
	wg.Wait()
	return first
}

// Expected maps every hash in a testnet's ground truth to the fetch
// outcome it must get: announced torrents ok, dead ones connect_failed,
// searched-only hashes no_peers, planted hashes their behaviour's Expect.
func Expected(t testnet.Truth) map[string]string {
	m := map[string]string{}
	for _, e := range t.Announced {
		m[e.InfoHash] = "ok"
	}
	for _, e := range t.Dead {
		m[e.InfoHash] = "connect_failed"
	}
	for _, e := range t.Searched {
		m[e.InfoHash] = "no_peers"
	}
	for kind, es := range t.Extra {
		b, ok := strings.CutPrefix(kind, truthPrefix)
		if !ok {
			continue
		}
		for _, e := range es {
			m[e.InfoHash] = Behaviour(b).Expect()
		}
	}
	return m
}
