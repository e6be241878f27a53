// Package testnet runs a small BitTorrent Mainline DHT on 127.0.0.1 for
// tests and demos: N anacrolix/dht nodes that bootstrap from one another
// and answer BEP 51 sample_infohashes, S anacrolix/torrent seeders serving
// generated torrents (announced through the DHT), searchers that send
// get_peers for further hashes (walks of internal/dhtwalk, as fetch's
// lookups), and dead hashes whose peer went away.
//
// Everything is deterministic for a given Config.Seed except the ports.
// What the testnet did is summed up by Net.Truth, the ground truth that
// capture and fetch tests compare against:
//
//	net, err := testnet.Start(ctx, testnet.Config{Seed: 1})
//	defer net.Close()
//	addrs := net.BootstrapAddrs()      // "127.0.0.1:port", ...
//	truth := net.Truth()               // announced, searched and dead hashes
//	net.Announce(ctx, ih, tcpAddr)     // make get_peers(ih) find tcpAddr
//	c, err := net.Client(ctx)          // an outside DHT node, bootstrapped
//	net.AddTruth("slow_peer", ih, "127.0.0.1:1234")
package testnet
