package fetch

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/anacrolix/torrent/mse"
	pp "github.com/anacrolix/torrent/peer_protocol"

	"github.com/infohash/infohash/formats/schema"
)

// Encryption is when fetch speaks BitTorrent Message Stream Encryption
// (MSE/PE: a Diffie-Hellman exchange, then RC4 or plaintext as the peer
// chooses, both offered) instead of the plaintext BEP 3 handshake. Peers
// set to require encryption hang up on a plaintext handshake; a few
// peers accept nothing else. The zero value is EncryptionPreferPlain.
type Encryption int

// The encryption policies (--encryption).
const (
	// EncryptionPreferPlain handshakes in plaintext, and dials the peer
	// again over MSE once when it hung up before any byte of its
	// handshake or answered with bytes that are no BitTorrent handshake
	// (an MSE peer's key): plaintext peers, nearly all, cost no more
	// than before; a peer requiring MSE costs a second dial.
	EncryptionPreferPlain Encryption = iota
	// EncryptionPrefer handshakes over MSE (one more round trip than
	// plaintext, and a Diffie-Hellman key each), and dials the peer again
	// in plaintext once when it hung up before answering our key or
	// answered with a plaintext handshake.
	EncryptionPrefer
	// EncryptionRequire handshakes over MSE only.
	EncryptionRequire
	// EncryptionOff handshakes in plaintext only, as fetch did before.
	EncryptionOff
)

var encryptionNames = [...]string{"prefer-plain", "prefer", "require", "off"}

// String is the policy's --encryption value.
func (e Encryption) String() string {
	if e < 0 || int(e) >= len(encryptionNames) {
		return fmt.Sprintf("Encryption(%d)", int(e))
	}
	return encryptionNames[e]
}

// EncryptionNames lists the --encryption values, the default first.
func EncryptionNames() []string { return encryptionNames[:] }

// ParseEncryption reads an --encryption value.
func ParseEncryption(s string) (Encryption, error) {
	for i, n := range encryptionNames {
		if s == n {
			return Encryption(i), nil
		}
	}
	return 0, fmt.Errorf("--encryption: %q is none of prefer-plain, prefer, require, off", s)
}

// encryptedFirst reports whether an exchange starts over MSE.
func (e Encryption) encryptedFirst() bool { return e == EncryptionPrefer || e == EncryptionRequire }

// retries reports whether a peer that refused the first way is dialled
// again the other way.
func (e Encryption) retries() bool { return e == EncryptionPreferPlain || e == EncryptionPrefer }

// mseSyncWindow is how many bytes a peer may send before its MSE
// verification constant: its 96-byte key, up to 512 bytes of padding and
// the 8-byte constant itself, the most the library reads looking for it.
// A peer that sent that many without one sent garbage.
const mseSyncWindow = 96 + 512 + 8

// talkEncrypted runs the exchange on conn over MSE: our BEP 3 handshake
// goes as MSE's initial payload, so a peer that serves the infohash
// answers with its own after the key exchange. It reports whether the
// peer refused MSE before saying anything of it (it hung up on our key
// without a byte, or answered with a plaintext handshake): a plaintext
// peer, worth a plaintext try.
func talkEncrypted(ctx context.Context, conn net.Conn, cfg *exchangeConfig, o *peerOutcome, start, connected time.Time) (plainPeer bool) {
	stop := watch(ctx, conn)
	defer stop()
	cfg.Stats.mseTried.Add(1)
	o.TriedMSE = true
	seen := &seenReader{r: conn}
	ia := appendHandshake(make([]byte, 0, handshakeLen), cfg.InfoHash, cfg.PeerID)
	rw, method, err := mse.InitiateHandshakeContext(ctx, struct {
		io.Reader
		io.Writer
	}{seen, conn}, cfg.InfoHash[:], ia, mse.AllSupportedCrypto)
	if err != nil {
		n, plaintext, ended := seen.saw()
		o.Err = mseFailure(ctx, err, n, ended)
		return plaintext || (n == 0 && o.Err.Class == schema.OutcomePeerLacksTorrent)
	}
	cfg.Stats.mseOK.Add(1)
	o.Crypto = method
	converse(conn, rw, nil, cfg, o, start, connected)
	return false
}

// mseFailure classifies a failed MSE handshake, err, the peer having
// sent n bytes before its side ended with ended (nil: it did not). A
// hang-up before the handshake completed is peer_lacks_torrent,
// as for a plaintext handshake: an MSE peer that does not serve the
// infohash (our handshake names it in its second step) hangs up. Bytes
// that hold no verification constant where one must be, or a crypto
// method we did not offer, are handshake_failed: the endpoint's fault,
// never the swarm's.
func mseFailure(ctx context.Context, err error, n int64, ended error) *PeerError {
	switch {
	case ctx.Err() != nil || isTimeout(err) || isTimeout(ended):
		return failf(schema.OutcomeTimeout, "no answer to the MSE handshake")
	case isLocal(err) || isLocal(ended):
		return failf(schema.OutcomeLocalError, "MSE handshake: %v", err)
	case n >= mseSyncWindow:
		return failf(schema.OutcomeHandshakeFailed, "peer's MSE answer is garbage (%d bytes without its verification constant): %v", n, err)
	case ended != nil:
		return failf(schema.OutcomePeerLacksTorrent, "peer hung up on our MSE handshake after %d bytes without completing it "+
			"(it does not serve this infohash): %v", n, ended)
	default:
		return failf(schema.OutcomeHandshakeFailed, "MSE handshake failed: %v", err)
	}
}

// seenReader counts the bytes a peer sent during the MSE handshake and
// keeps the first of them. The library reads it from goroutines that may
// outlive a cancelled handshake, hence the lock.
type seenReader struct {
	r     io.Reader
	mu    sync.Mutex
	n     int64
	first []byte
	ended error // the first error reading: the peer's side ended (EOF, reset) or a deadline passed
}

func (s *seenReader) Read(b []byte) (int, error) {
	n, err := s.r.Read(b)
	s.mu.Lock()
	defer s.mu.Unlock()
	if k := min(n, len(pp.Protocol)-len(s.first)); k > 0 {
		s.first = append(s.first, b[:k]...)
	}
	s.n += int64(n)
	if err != nil && s.ended == nil {
		s.ended = err
	}
	return n, err
}

// saw returns how many bytes arrived, whether they began as a plaintext
// BitTorrent handshake, and the error that ended the peer's side, if any.
func (s *seenReader) saw() (n int64, plaintext bool, ended error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n, string(s.first) == pp.Protocol, s.ended
}

// cryptoName names an MSE crypto method for details.
func cryptoName(m mse.CryptoMethod) string {
	switch m {
	case mse.CryptoMethodRC4:
		return "RC4"
	case mse.CryptoMethodPlaintext:
		return "plaintext after the key exchange"
	}
	return fmt.Sprintf("method %#x", uint32(m))
}

// settle is the outcome of an exchange whose peer refused the first way
// (first) and was dialled again the other way (second): the second
// unless it failed less tellingly than the first (a stall, a refused
// dial), when the first stands with the second's failure in its detail.
func settle(first, second peerOutcome) peerOutcome {
	if second.Err == nil || Outranks(second.Err.Class, first.Err.Class) {
		second.Retried = true
		if second.Err != nil {
			second.Err = failf(second.Err.Class, "%s, after a handshake %s that it refused", second.Err.Detail, first.way())
		}
		return second
	}
	first.Err = failf(first.Err.Class, "%s; then %s: %s", first.Err.Detail, second.way(), second.Err.Detail)
	return first
}

// way says how an exchange talked: "over MSE" or "in plaintext".
func (o *peerOutcome) way() string {
	if o.TriedMSE {
		return "over MSE"
	}
	return "in plaintext"
}

// over is what a detail of o adds to say that the peer said it over MSE
// ("" in plaintext).
func (o *peerOutcome) over() string {
	if o.Crypto == 0 {
		return ""
	}
	return " (over MSE, " + cryptoName(o.Crypto) + ")"
}

// servedOver is an ok result's detail saying that its metadata came over
// MSE, and whether after a plaintext refusal ("" when it came in
// plaintext from the first handshake, as before --encryption).
func (o *peerOutcome) servedOver() string {
	switch {
	case o.Crypto != 0 && o.Retried:
		return "metadata came over MSE (" + cryptoName(o.Crypto) + "), the peer having refused a plaintext handshake"
	case o.Crypto != 0:
		return "metadata came over MSE (" + cryptoName(o.Crypto) + ")"
	case o.Retried:
		return "metadata came in plaintext, the peer having refused an MSE handshake"
	}
	return ""
}

// joinDetail joins the non-empty parts of a detail with "; ".
func joinDetail(parts ...string) string {
	var s string
	for _, p := range parts {
		switch {
		case p == "":
		case s == "":
			s = p
		default:
			s += "; " + p
		}
	}
	return s
}
