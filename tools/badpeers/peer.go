package badpeers

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anacrolix/torrent/bencode"
	"github.com/anacrolix/torrent/mse"
	pp "github.com/anacrolix/torrent/peer_protocol"

	"github.com/infohash/infohash/tools/testnet"
)

// Config tunes a peer. The zero value is usable.
type Config struct {
	// TooLargeSize is the metadata_size a TooLarge peer announces;
	// default 10 MiB + 1, just over fetch's default cap.
	TooLargeSize int64
	// Other is the torrent a WrongTorrent peer serves whatever it is asked
	// for; default NewTorrent(0xbad, 3, 40).
	Other *Torrent
	// MSECrypto is the MSE crypto method a RequireMSE peer chooses when
	// the fetcher offers it; default mse.CryptoMethodRC4 (libtorrent's
	// default chooses plaintext, mse.CryptoMethodPlaintext).
	MSECrypto mse.CryptoMethod
}

// Peer is one running peer on 127.0.0.1.
type Peer struct {
	behaviour Behaviour
	cfg       Config
	addr      *net.TCPAddr
	ln        net.Listener
	refuse    io.Closer // Refuse: a bound socket that never listens

	mu       sync.Mutex
	torrents map[[20]byte][]byte
	conns    map[net.Conn]struct{}
	closed   bool
	wg       sync.WaitGroup
	accepted atomic.Int64
}

// Start starts a peer behaving as b on 127.0.0.1 with a free port.
func Start(b Behaviour, cfg Config) (*Peer, error) {
	if b.Expect() == "" {
		return nil, fmt.Errorf("badpeers: unknown behaviour %q", b)
	}
	if cfg.TooLargeSize == 0 {
		cfg.TooLargeSize = 10<<20 + 1
	}
	if cfg.MSECrypto == 0 {
		cfg.MSECrypto = mse.CryptoMethodRC4
	}
	if cfg.Other == nil {
		o := NewTorrent(0xbad, 3, 40)
		cfg.Other = &o
	}
	p := &Peer{behaviour: b, cfg: cfg, torrents: map[[20]byte][]byte{}, conns: map[net.Conn]struct{}{}}
	if b == Refuse {
		c, addr, err := testnet.HoldPort()
		if err != nil {
			return nil, fmt.Errorf("badpeers: %s: %w", b, err)
		}
		p.refuse, p.addr = c, addr
		return p, nil
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("badpeers: %s: %w", b, err)
	}
	p.ln, p.addr = ln, ln.Addr().(*net.TCPAddr)
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Accepted is how many connections the peer has accepted so far. A
// connection is counted once it is the peer's to serve (and Close's to
// close), so tests can wait for it rather than sleep.
func (p *Peer) Accepted() int64 { return p.accepted.Load() }

// Behaviour returns the peer's behaviour.
func (p *Peer) Behaviour() Behaviour { return p.behaviour }

// Addr returns "127.0.0.1:port".
func (p *Peer) Addr() string { return p.addr.String() }

// TCPAddr returns the peer's address.
func (p *Peer) TCPAddr() *net.TCPAddr { return p.addr }

// Add makes the peer hold torrents. Only Good and RequireMSE peers need
// them; the others answer for any infohash, but Reject and Garbage
// announce the right metadata_size for torrents they hold.
func (p *Peer) Add(ts ...Torrent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range ts {
		p.torrents[t.InfoHash] = t.Info
	}
}

// Close stops the peer and closes its connections.
func (p *Peer) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	if p.refuse != nil {
		return p.refuse.Close()
	}
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

func (p *Peer) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.Close()
			return
		}
		p.conns[c] = struct{}{}
		p.wg.Add(1)
		p.accepted.Add(1)
		p.mu.Unlock()
		go func() {
			defer p.wg.Done()
			p.serve(c)
			p.mu.Lock()
			delete(p.conns, c)
			p.mu.Unlock()
			c.Close()
		}()
	}
}

// serve plays the peer's part of one connection. Apart from Stall, every
// peer gives up on a connection after a minute.
func (p *Peer) serve(c net.Conn) {
	if p.behaviour != Stall {
		_ = c.SetDeadline(time.Now().Add(time.Minute))
	}
	var rw io.ReadWriter = c
	switch p.behaviour {
	case MSEGarbage:
		sendGarbage(c)
		return
	case RequireMSE:
		s, ok := p.receiveMSE(c)
		if !ok {
			return
		}
		rw = s
	}
	r := bufio.NewReader(rw)
	var hs [68]byte
	if _, err := io.ReadFull(r, hs[:]); err != nil || string(hs[:20]) != pp.Protocol {
		return
	}
	var ih [20]byte
	copy(ih[:], hs[28:48])
	p.mu.Lock()
	info, have := p.torrents[ih]
	p.mu.Unlock()
	switch p.behaviour {
	case Close:
		return
	case NotBitTorrent:
		_, _ = c.Write([]byte("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n"))
		return
	case Stall:
		_, _ = io.Copy(io.Discard, r)
		return
	case Good, RequireMSE:
		if !have {
			return
		}
	case WrongTorrent:
		info = p.cfg.Other.Info
	}
	reply := ih
	if p.behaviour == WrongHash {
		for i := range reply {
			reply[i] ^= 0xff
		}
	}
	bits := pp.NewPeerExtensionBytes(pp.ExtensionBitLtep, pp.ExtensionBitDht)
	if p.behaviour == NoExtension {
		bits = pp.NewPeerExtensionBytes(pp.ExtensionBitDht)
	}
	out := append([]byte(pp.Protocol), bits[:]...)
	out = append(out, reply[:]...)
	out = append(out, "-BP0001-badpeers0001"...)
	if _, err := rw.Write(out); err != nil {
		return
	}
	if p.behaviour == WrongHash || p.behaviour == NoExtension {
		_, _ = io.Copy(io.Discard, r) // until the fetcher hangs up
		return
	}
	p.exchange(rw, r, info)
}

// ourMetadataID is the ut_metadata id these peers announce; deliberately
// not 1, so a fetcher that mixes up the two directions' ids fails.
const ourMetadataID = 3

// exchange runs the BEP 10 / BEP 9 part after the handshake.
func (p *Peer) exchange(c io.Writer, r *bufio.Reader, info []byte) {
	size := int64(len(info))
	if size == 0 {
		size = 1234 // Reject and Garbage peers asked about an unknown torrent
	}
	hs := map[string]any{"m": map[string]int{"ut_metadata": ourMetadataID, "ut_pex": 2}, "metadata_size": size, "v": "badpeers"}
	switch p.behaviour {
	case NoUTMetadata:
		hs = map[string]any{"m": map[string]int{"ut_pex": 2}, "v": "badpeers"}
	case TooLarge:
		hs["metadata_size"] = p.cfg.TooLargeSize
	}
	w := bufio.NewWriter(c)
	// A bitfield and an unchoke first: fetchers must skip what they did not ask for.
	writeMsg(w, byte(pp.Bitfield), []byte{0xff, 0x80})
	writeMsg(w, byte(pp.Unchoke), nil)
	if p.behaviour == BadExtHandshake {
		// A dictionary cut short after its first key.
		writeExt(w, 0, []byte("d1:md11:ut_metadatai3e"))
		if w.Flush() == nil {
			_, _ = io.Copy(io.Discard, r) // until the fetcher hangs up
		}
		return
	}
	writeExt(w, 0, bencode.MustMarshal(hs))
	if w.Flush() != nil {
		return
	}
	theirID := -1
	for {
		typ, payload, err := readMsg(r)
		if err != nil {
			return
		}
		if typ != byte(pp.Extended) || len(payload) == 0 {
			continue
		}
		id, body := payload[0], payload[1:]
		if id == 0 {
			var h struct {
				M map[string]int `bencode:"m"`
			}
			if bencode.Unmarshal(body, &h) == nil {
				theirID = h.M["ut_metadata"]
			}
			continue
		}
		if id != ourMetadataID || theirID <= 0 {
			continue
		}
		var req struct {
			Type  int `bencode:"msg_type"`
			Piece int `bencode:"piece"`
		}
		if bencode.Unmarshal(body, &req) != nil || req.Type != 0 {
			continue
		}
		p.answer(w, byte(theirID), req.Piece, info)
		if w.Flush() != nil {
			return
		}
	}
}

// answer answers one metadata request as the behaviour says.
func (p *Peer) answer(w *bufio.Writer, id byte, piece int, info []byte) {
	switch p.behaviour {
	case Reject, NoUTMetadata, TooLarge:
		writeExt(w, id, fmt.Appendf(nil, "d8:msg_typei2e5:piecei%dee", piece))
	case Garbage:
		writeExt(w, id, fmt.Appendf(nil, "d8:msg_typei1e5:piecei%de10:total_size", piece))
	default:
		off := piece * 16384
		if piece < 0 || off >= len(info) {
			writeExt(w, id, fmt.Appendf(nil, "d8:msg_typei2e5:piecei%dee", piece))
			return
		}
		end := min(off+16384, len(info))
		msg := fmt.Appendf(nil, "d8:msg_typei1e5:piecei%de10:total_sizei%dee", piece, len(info))
		writeExt(w, id, append(msg, info[off:end]...))
	}
}

func writeMsg(w *bufio.Writer, typ byte, payload []byte) {
	var hdr [5]byte
	binary.BigEndian.PutUint32(hdr[:4], uint32(1+len(payload)))
	hdr[4] = typ
	w.Write(hdr[:])
	w.Write(payload)
}

func writeExt(w *bufio.Writer, id byte, payload []byte) {
	writeMsg(w, byte(pp.Extended), append([]byte{id}, payload...))
}

var errTooLong = errors.New("message too long")

// readMsg reads one length-prefixed message (keep-alives are skipped).
func readMsg(r *bufio.Reader) (byte, []byte, error) {
	for {
		var hdr [4]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return 0, nil, err
		}
		n := binary.BigEndian.Uint32(hdr[:])
		if n == 0 {
			continue
		}
		if n > 1<<20 {
			return 0, nil, errTooLong
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			return 0, nil, err
		}
		return b[0], b[1:], nil
	}
}
