package testnet

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/infohash/infohash/internal/dhtwalk"
)

// startSeeders generates the torrents, seeds them, and announces them; it
// then announces the dead torrents with a peer that refuses connections.
func (n *Net) startSeeders(rng *rand.Rand) error {
	dir := n.cfg.DataDir
	if dir == "" {
		d, err := os.MkdirTemp("", "testnet-*")
		if err != nil {
			return fmt.Errorf("testnet: %w", err)
		}
		n.tmpDir, dir = d, d
	}
	for i := range n.cfg.Seeders {
		s, err := newSeeder(fmt.Sprintf("%s/seeder%d", dir, i))
		if err != nil {
			return err
		}
		n.seeders = append(n.seeders, s)
	}
	total := n.cfg.Torrents + n.cfg.Dead
	for i := range total {
		t, err := genTorrent(rng, i)
		if err != nil {
			return err
		}
		if i >= n.cfg.Torrents {
			t.Dead = true
		}
		n.torrents = append(n.torrents, t)
	}
	// Torrent i is seeded by seeder i%S, and every other one also by the
	// next seeder.
	for i := range n.cfg.Torrents {
		t := &n.torrents[i]
		owners := []*seeder{n.seeders[i%len(n.seeders)]}
		if i%2 == 0 && len(n.seeders) > 1 {
			owners = append(owners, n.seeders[(i+1)%len(n.seeders)])
		}
		for _, s := range owners {
			if err := s.add(*t); err != nil {
				return err
			}
			t.Seeders = append(t.Seeders, s.addr)
		}
	}
	if err := n.announceAll(n.torrents[:n.cfg.Torrents]); err != nil {
		return err
	}
	if n.cfg.Dead == 0 {
		return nil
	}
	// The dead hashes' peer is gone: its port is held, not listened on, so
	// that connecting is refused for the testnet's life. A closed seeder's
	// freed port was taken over by a listener started later (a badpeers
	// peer, another test's), which answered for it.
	c, addr, err := HoldPort()
	if err != nil {
		return fmt.Errorf("testnet: dead peer: %w", err)
	}
	n.deadPort = c
	for i := n.cfg.Torrents; i < total; i++ {
		n.torrents[i].Seeders = []string{addr.String()}
	}
	return n.announceAll(n.torrents[n.cfg.Torrents:])
}

// announceAll announces every seeder of every torrent, a few at a time.
func (n *Net) announceAll(ts []Torrent) error {
	sem := make(chan struct{}, 8)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for _, t := range ts {
		for _, addr := range t.Seeders {
			tcp, err := tcpAddr(addr)
			if err != nil {
				return err
			}
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				if err := n.Announce(n.ctx, t.InfoHash, tcp); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	return first
}

func tcpAddr(s string) (*net.TCPAddr, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return nil, fmt.Errorf("testnet: %q: %w", s, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return nil, fmt.Errorf("testnet: %q: %w", s, err)
	}
	return &net.TCPAddr{IP: net.ParseIP(host), Port: p}, nil
}

// search looks up the searched hashes, and one announced hash, every
// period, from rotating nodes: the get_peers traffic real clients make.
func (n *Net) search(every time.Duration) {
	defer n.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for round := 0; ; round++ {
		targets := append([][20]byte(nil), n.searched...)
		if n.cfg.Torrents > 0 {
			targets = append(targets, n.torrents[round%n.cfg.Torrents].InfoHash)
		}
		for i, ih := range targets {
			if n.ctx.Err() != nil {
				return
			}
			nd := n.nodes[(round+i)%len(n.nodes)]
			// Not AnnounceTraversal: a stale "stalled" can end it before
			// its first query (see dhtwalk.Walk).
			w, err := dhtwalk.Start(nd.srv, ih)
			if err != nil {
				continue
			}
			for range w.Peers {
			}
		}
		select {
		case <-n.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// reannounce repeats the seeders' announces, as real clients do.
func (n *Net) reannounce(every time.Duration) {
	defer n.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-n.ctx.Done():
			return
		case <-t.C:
			_ = n.announceAll(n.torrents[:n.cfg.Torrents])
		}
	}
}

// flapDead drops the dead hashes from the nodes' stores and announces
// them again, one every period, in turn (Config.DeadFlap).
func (n *Net) flapDead(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	dead := n.torrents[n.cfg.Torrents:]
	gone := make([]bool, len(dead))
	for round := 0; ; round++ {
		select {
		case <-n.ctx.Done():
			return
		case <-t.C:
		}
		i := round % len(dead)
		if gone[i] {
			tcp, err := tcpAddr(dead[i].Seeders[0])
			if err == nil && n.Announce(n.ctx, dead[i].InfoHash, tcp) == nil {
				gone[i] = false
			}
			continue
		}
		for _, nd := range n.nodes {
			nd.store.drop(dead[i].InfoHash)
		}
		gone[i] = true
	}
}

// Truth returns the ground truth so far.
func (n *Net) Truth() Truth {
	t := Truth{Seed: n.cfg.Seed, Bootstrap: n.BootstrapAddrs(), Extra: map[string][]TruthEntry{}}
	for _, tor := range n.Torrents() {
		e := TruthEntry{InfoHash: tor.Hex(), Peers: tor.Seeders, Name: tor.Info.Name, InfoSize: len(tor.InfoBytes)}
		if tor.Dead {
			t.Dead = append(t.Dead, e)
		} else {
			t.Announced = append(t.Announced, e)
		}
	}
	for _, h := range n.searched {
		t.Searched = append(t.Searched, TruthEntry{InfoHash: fmt.Sprintf("%x", h)})
	}
	n.mu.Lock()
	for k, v := range n.extra {
		t.Extra[k] = append([]TruthEntry(nil), v...)
	}
	n.mu.Unlock()
	return t
}
