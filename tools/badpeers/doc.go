// Package badpeers runs BitTorrent peers on 127.0.0.1 that speak the wire
// protocol (BEP 3 handshake, BEP 10 extension protocol, BEP 9 ut_metadata)
// and each fail in exactly one way, plus a correct one for controls. Tests
// and the demo plant them in a swarm (directly, or announced through the
// loopback DHT testnet) and check that fetch classifies every attempt as
// the behaviour's Expect says.
//
//	p, _ := badpeers.Start(badpeers.Reject, badpeers.Config{})
//	defer p.Close()
//	// fetch from p.Addr(): outcome "rejected"
//
// Every peer but Good answers for any infohash it is asked about; Good
// serves only the torrents added to it and closes the connection for any
// other (the "does not have the torrent" case: peer_lacks_torrent, as
// for Close, which has none). RequireMSE serves as Good does, but only
// over message stream encryption (MSE), hanging up on plaintext.
package badpeers
