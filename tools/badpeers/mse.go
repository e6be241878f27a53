package badpeers

import (
	"bytes"
	"context"
	"crypto/sha1"
	"io"
	"net"
	"time"

	"github.com/anacrolix/torrent/mse"
	pp "github.com/anacrolix/torrent/peer_protocol"
)

// receiveMSE plays a RequireMSE peer's part before the BitTorrent
// handshake: it hangs up on a plaintext handshake, as clients set to
// require encryption do, and otherwise receives an MSE handshake for one
// of the torrents it holds (choosing Config.MSECrypto when offered). It
// returns the stream the BitTorrent exchange goes on, or false when the
// connection is over.
func (p *Peer) receiveMSE(c net.Conn) (io.ReadWriter, bool) {
	var first [20]byte
	if _, err := io.ReadFull(c, first[:]); err != nil || string(first[:]) == pp.Protocol {
		return nil, false
	}
	rw := struct {
		io.Reader
		io.Writer
	}{io.MultiReader(bytes.NewReader(first[:]), c), c}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, _, err := mse.ReceiveHandshake(ctx, rw, p.skeys, p.chooseCrypto)
	if err != nil {
		return nil, false // no torrent of ours (mse.ErrNoSecretKeyMatch), or garbage
	}
	return s, true
}

// skeys offers MSE the infohashes of the torrents the peer holds.
func (p *Peer) skeys(yield func(skey []byte) bool) {
	p.mu.Lock()
	hashes := make([][20]byte, 0, len(p.torrents))
	for ih := range p.torrents {
		hashes = append(hashes, ih)
	}
	p.mu.Unlock()
	for _, ih := range hashes {
		if !yield(ih[:]) {
			return
		}
	}
}

// chooseCrypto picks Config.MSECrypto when the initiator offers it, else
// what it offers (plaintext first, as the library's default does).
func (p *Peer) chooseCrypto(provided mse.CryptoMethod) mse.CryptoMethod {
	if provided&p.cfg.MSECrypto != 0 {
		return p.cfg.MSECrypto
	}
	return mse.DefaultCryptoSelector(provided)
}

// garbageLen is how much an MSEGarbage peer sends: more than an MSE
// initiator reads looking for the verification constant (96-byte key,
// 512 bytes of padding at most, 8-byte constant).
const garbageLen = 1024

// sendGarbage sends garbageLen bytes that are neither a BitTorrent
// handshake nor an MSE answer, then reads until the fetcher hangs up.
func sendGarbage(c net.Conn) {
	b := make([]byte, 0, garbageLen)
	sum := sha1.Sum([]byte("badpeers mse_garbage"))
	for len(b) < garbageLen {
		b = append(b, sum[:]...)
		sum = sha1.Sum(sum[:])
	}
	if _, err := c.Write(b[:garbageLen]); err == nil {
		_, _ = io.Copy(io.Discard, c)
	}
}
