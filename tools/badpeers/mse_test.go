package badpeers

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/anacrolix/torrent/mse"
	pp "github.com/anacrolix/torrent/peer_protocol"
)

// TestRequireMSE: a RequireMSE peer hangs up on a plaintext handshake
// without a byte, answers an MSE handshake for a torrent it holds with
// the method asked of it and then its BitTorrent handshake for that
// infohash, and hangs up on an MSE handshake for another.
func TestRequireMSE(t *testing.T) {
	tor, other := NewTorrent(5, 1, 10), NewTorrent(6, 1, 10)
	hs := func(ih [20]byte) []byte {
		b := append([]byte(pp.Protocol), make([]byte, 8)...)
		b = append(b, ih[:]...)
		return append(b, make([]byte, 20)...)
	}
	for _, method := range []mse.CryptoMethod{mse.CryptoMethodRC4, mse.CryptoMethodPlaintext} {
		p, err := Start(RequireMSE, Config{MSECrypto: method})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		p.Add(tor)
		dial := func() net.Conn {
			t.Helper()
			c, err := net.DialTimeout("tcp", p.Addr(), hangGuard)
			if err != nil {
				t.Fatal(err)
			}
			c.SetDeadline(time.Now().Add(hangGuard))
			return c
		}

		c := dial()
		c.Write(hs(tor.InfoHash))
		if b, err := io.ReadAll(c); len(b) != 0 || (err != nil && !errors.Is(err, syscall.ECONNRESET)) {
			t.Errorf("method %d, plaintext: got %d bytes, err %v; want a hang-up", method, len(b), err)
		}
		c.Close()

		c = dial()
		rw, got, err := mse.InitiateHandshake(c, tor.InfoHash[:], hs(tor.InfoHash), mse.AllSupportedCrypto)
		if err != nil || got != method {
			t.Fatalf("MSE handshake: method %d, err %v; want method %d", got, err, method)
		}
		var answer [68]byte
		if _, err := io.ReadFull(rw, answer[:]); err != nil || !bytes.Equal(answer[28:48], tor.InfoHash[:]) {
			t.Fatalf("method %d: answer %q, err %v; want a handshake for %x", method, answer, err, tor.InfoHash)
		}
		c.Close()

		c = dial()
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		if _, _, err := mse.InitiateHandshakeContext(ctx, c, other.InfoHash[:], hs(other.InfoHash), mse.AllSupportedCrypto); err == nil {
			t.Errorf("method %d: MSE handshake for a torrent the peer lacks succeeded", method)
		}
		cancel()
		c.Close()
	}
}

// TestMSEGarbage: an MSEGarbage peer answers with garbageLen bytes that
// do not begin a BitTorrent handshake.
func TestMSEGarbage(t *testing.T) {
	p, err := Start(MSEGarbage, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.DialTimeout("tcp", p.Addr(), hangGuard)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(hangGuard))
	b := make([]byte, garbageLen)
	if _, err := io.ReadFull(c, b); err != nil || bytes.HasPrefix(b, []byte(pp.Protocol)) {
		t.Fatalf("err %v, begins %q", err, b[:20])
	}
}
