package fetch

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/anacrolix/torrent/mse"
	pp "github.com/anacrolix/torrent/peer_protocol"

	"github.com/infohash/infohash/formats/bencode"
	"github.com/infohash/infohash/formats/infodict"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/clock"
)

// ourExtHandshake is the payload of our BEP 10 handshake: ut_metadata only.
var ourExtHandshake = new(bencode.Encoder).Dict().
	Str("m").Dict().Str("ut_metadata").Int(ourUTMetadataID).End().
	Str("v").Str("infohash").End().B

// exchangeConfig is what one peer exchange needs to know.
type exchangeConfig struct {
	InfoHash        [20]byte
	InfoHashV2      []byte // the job's full v2 hash (32 bytes), or nil when not known: a claim (see verifyInfo)
	PeerID          [20]byte
	MaxMetadataSize int64
	ConnectTimeout  time.Duration
	Encryption      Encryption // when to speak MSE (Options.Encryption)
	Ways            *ways      // the way each endpoint spoke this run (nil: none remembered)
	Stats           *counters
	Mem             *memBudget                       // bounds the pieces held by all exchanges
	Clock           clock.Clock                      // stamps the outcome (peerOutcome.At)
	guard           func(network, addr string) error // Options.guard
}

// peerOutcome is the result of one exchange with one peer.
type peerOutcome struct {
	Addr         string
	Err          *PeerError // nil when the peer served verified metadata
	Cancelled    bool       // stopped by us (another peer won, or the run stopped)
	CutOff       bool       // still exchanging when the job's deadline passed: no failure of this peer's
	Final        bool       // the metadata itself is bad: other peers cannot do better
	Meta         schema.Meta
	HashType     int8          // which hash of Meta.InfoBytes matched (see verifyInfo)
	InfoHashV2   []byte        // their SHA-256 when that matched
	Refuted      string        // how the metadata refuted the job's full v2 hash ("" when it did not, or gave none)
	MetadataSize int64         // size the peer announced (0 = none)
	Handshook    bool          // the BEP 3 handshake completed: ConnectDur and HandshakeDur are set
	ConnectDur   time.Duration // from the dial to the end of the BEP 3 handshake
	HandshakeDur time.Duration // from the connection to the end of the BEP 3 handshake
	Extended     bool          // the peer's BEP 10 extended handshake decoded: ExtensionDur is set
	ExtensionDur time.Duration // from the end of the BEP 3 handshake to the peer's extended handshake
	Verified     bool          // the info dictionary matched the infohash: VerifyDur is set
	VerifyDur    time.Duration // hashing the info dictionary
	MetadataDur  time.Duration // from the end of the BEP 3 handshake to verified metadata (set only then)
	At           time.Time
	TriedMSE     bool             // the exchange that decided this outcome began an MSE handshake
	Crypto       mse.CryptoMethod // the MSE handshake completed and the peer chose this method (0: none)
	Retried      bool             // the peer refused the way tried first, and this outcome is the other way's
	SpokePlain   bool             // the peer sent a plaintext BEP 3 protocol header
}

var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4<<10) }}

// exchange connects to addr and fetches the info dictionary of
// cfg.InfoHash over BEP 3 + BEP 10 + BEP 9, verifying its hash, in
// plaintext or over MSE as cfg.Encryption says (a peer that refuses the
// first way is dialled once more the other way: see settle). It always
// returns; ctx bounds the whole exchange. A deadline on ctx is the peer's
// own (a timeout it is blamed for) unless its cause is errJobDeadline:
// then the exchange was cut off by the job's deadline, which is ours.
func exchange(ctx context.Context, addr string, cfg *exchangeConfig) (o peerOutcome) {
	o.Addr = addr
	start := time.Now()
	dialFailed, dialLocal := false, false
	defer func() {
		o.At = cfg.Clock.Now()
		if o.Err != nil && (o.Err.Class == schema.OutcomeTimeout || o.Err.Class == schema.OutcomeConnectFailed) {
			switch err := ended(ctx); {
			case errors.Is(context.Cause(ctx), errJobDeadline):
				// Only the peer's own limits (PeerTimeout,
				// ConnectTimeout) may blame it, never our deadline
				// (nor a test's cut of it, Options.cutJob: a cancel
				// with its cause, where the deadline's ctx.Err() is
				// context.DeadlineExceeded).
				o.Err, o.CutOff = nil, true
			case err == context.Canceled:
				// A deadline we forced because another peer won (or
				// the run stopped) is no failure of this peer's.
				o.Err, o.Cancelled = nil, true
			}
		}
		switch {
		case dialFailed && o.Err != nil:
			cfg.Stats.connectsFailed.Add(1)
		case dialFailed:
			// A dial we cancelled or cut off did not fail.
			cfg.Stats.connectsCancelled.Add(1)
		case dialLocal:
			cfg.Stats.connectsLocal.Add(1)
		}
	}()
	way, known := cfg.Encryption.encryptedFirst(), spokeUnknown
	if cfg.Encryption.retries() {
		// A peer that spoke one way this run is spoken to that way,
		// and its refusals are no reason to try the other.
		if known = cfg.Ways.get(addr); known != spokeUnknown {
			way = known == spokeMSE
		}
	}
	conn, perr, local := dial(ctx, addr, cfg)
	if perr != nil {
		o.Err, dialFailed, dialLocal = perr, !local, local
		return o
	}
	refused := talkWay(ctx, conn, way, cfg, &o, start)
	cfg.Ways.learn(&o)
	if !refused || !cfg.Encryption.retries() || known != spokeUnknown {
		return o
	}
	// The peer refused this way before saying a word of it: dial it
	// again once the other way, within the same PeerTimeout.
	cfg.Stats.encryptionRetries.Add(1)
	first := o
	conn, perr, local = dial(ctx, addr, cfg)
	if perr != nil {
		countRetryDial(ctx, cfg.Stats, local)
		o = settle(first, peerOutcome{Addr: addr, Err: perr, TriedMSE: !way})
		return o
	}
	second := peerOutcome{Addr: addr}
	talkWay(ctx, conn, !way, cfg, &second, start)
	cfg.Ways.learn(&second)
	o = settle(first, second)
	return o
}

// talkWay runs the exchange on conn, over MSE when encrypted, and closes
// conn. It reports whether the peer refused that way before saying a
// word of it (see talk, talkEncrypted).
func talkWay(ctx context.Context, conn net.Conn, encrypted bool, cfg *exchangeConfig, o *peerOutcome, start time.Time) bool {
	defer conn.Close()
	if encrypted {
		return talkEncrypted(ctx, conn, cfg, o, start, time.Now())
	}
	return talk(ctx, conn, cfg, o, start, time.Now())
}

// ended returns ctx.Err(), first waiting for ctx to end if its deadline
// has passed: an I/O or dial deadline set from ctx's can fire before
// ctx's own timer, and which deadline ended ctx (its cause) tells whose
// limit the exchange hit.
func ended(ctx context.Context) error {
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		<-ctx.Done()
	}
	return ctx.Err()
}

// watch makes conn's I/O end when ctx does; call the function it
// returns once done with conn.
func watch(ctx context.Context, conn net.Conn) (stop func() bool) {
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	return context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
}

// talk runs the BitTorrent exchange in plaintext on an open connection,
// filling o: start is when the dial began, connected when it ended. It
// reports whether the peer refused plaintext: it hung up before a byte
// of its handshake (as peers requiring encryption do), or answered with
// bytes that are no BitTorrent handshake (an MSE peer's key, say).
func talk(ctx context.Context, conn net.Conn, cfg *exchangeConfig, o *peerOutcome, start, connected time.Time) (refused bool) {
	stop := watch(ctx, conn)
	defer stop()
	// Write errors are left to the next read to classify: a peer that
	// said something and hung up must be judged by what it said.
	_, werr := conn.Write(appendHandshake(make([]byte, 0, handshakeLen), cfg.InfoHash, cfg.PeerID))
	return converse(conn, conn, werr, cfg, o, start, connected)
}

// converse reads the peer's BEP 3 handshake from rw (conn itself, or the
// MSE stream on it), ours having been sent (werr: how its write failed),
// and runs the rest of the exchange on rw. Over MSE (o.Crypto set) the
// peer already proved it knows the infohash: a hang-up before its
// handshake is its failure, handshake_failed. It reports whether a
// plaintext peer refused plaintext (see talk).
func converse(conn net.Conn, rw io.ReadWriter, werr error, cfg *exchangeConfig, o *peerOutcome, start, connected time.Time) (refused bool) {
	r := readers.Get().(*bufio.Reader)
	r.Reset(rw)
	defer func() { r.Reset(nil); readers.Put(r) }()
	h, got, err := readHandshake(r)
	o.SpokePlain = o.Crypto == 0 && got >= len(pp.Protocol) && !errors.Is(err, errBadProtocol)
	switch {
	case errors.Is(err, errBadProtocol):
		o.Err = failf(schema.OutcomeHandshakeFailed, "peer does not speak the BitTorrent protocol%s", o.over())
		return o.Crypto == 0
	case err != nil:
		class := handshakeHangUp(werr, got, h, cfg)
		if o.Crypto != 0 {
			class = schema.OutcomeHandshakeFailed
		}
		o.Err = ioFailure(err, class, "to the handshake"+o.over())
		if o.Err.Class == schema.OutcomePeerLacksTorrent {
			o.Err.Detail = "peer hung up on our handshake without answering for this infohash (it does not serve it): " + err.Error()
		}
		hungUp := o.Err.Class == schema.OutcomePeerLacksTorrent || o.Err.Class == schema.OutcomeHandshakeFailed
		return o.Crypto == 0 && got == 0 && hungUp
	case h.InfoHash != cfg.InfoHash:
		o.Err = failf(schema.OutcomePeerLacksTorrent, "peer answered for infohash %s%s", hex.EncodeToString(h.InfoHash[:]), o.over())
		return false
	}
	cfg.Stats.handshakes.Add(1)
	handshook := time.Now()
	o.Handshook, o.ConnectDur, o.HandshakeDur = true, handshook.Sub(start), handshook.Sub(connected)
	if !h.Bits.SupportsExtended() {
		o.Err = failf(schema.OutcomeNoExtension, "peer does not support BEP 10 (reserved %x)%s", h.Bits[:], o.over())
		return false
	}
	_, _ = rw.Write(appendExtended(nil, extHandshakeID, ourExtHandshake))
	info, perr := fetchMetadata(rw, remoteIP(conn), r, cfg, o, handshook)
	if perr != nil {
		perr.Detail += o.over()
		o.Err = perr
		return false
	}
	cfg.Stats.metadataReceived.Add(1)
	verifying := time.Now()
	typ, v2, refuted, ok := verifyInfo(info, cfg.InfoHash, cfg.InfoHashV2)
	if !ok {
		o.Err = failf(schema.OutcomeHashMismatch, "%s", mismatchDetail(info, cfg.InfoHashV2))
		return false
	}
	cfg.Stats.verified.Add(1)
	if refuted {
		cfg.Stats.v2ClaimsRefuted.Add(1)
		o.Refuted = refutedDetail(cfg.InfoHashV2, typ, v2)
	}
	o.Verified, o.VerifyDur = true, time.Since(verifying)
	m, err := infodict.ParseAs(info, typ)
	if err != nil {
		o.Err = failf(schema.OutcomeInvalidMetadata, "%s", invalidDetail(err, info, typ))
		o.Final = true // the bytes match the infohash: every peer serves the same
		return false
	}
	o.Meta, o.HashType, o.InfoHashV2 = m, typ, v2
	o.MetadataDur = time.Since(handshook)
	return false
}

// handshakeHangUp is the class of a peer that hung up during the BEP 3
// handshake, got bytes of its own handshake having arrived (h holds its
// infohash when they include it). A peer that does not serve a torrent
// hangs up once it has read the infohash we asked for (or answers for
// another): that is peer_lacks_torrent, a fact about this hash only,
// which must not cost the endpoint the hashes it does serve. Only when
// our handshake was not sent whole (werr), or the peer had answered for
// our infohash before it hung up, is it the peer's own failure,
// handshake_failed.
func handshakeHangUp(werr error, got int, h peerHandshake, cfg *exchangeConfig) string {
	if werr != nil || (got >= infoHashEnd && h.InfoHash == cfg.InfoHash) {
		return schema.OutcomeHandshakeFailed
	}
	return schema.OutcomePeerLacksTorrent
}

// fetchMetadata waits for the peer's extended handshake (timed from
// handshook, the end of the BEP 3 handshake), requests every metadata
// piece and assembles them.
func fetchMetadata(w io.Writer, ip netip.Addr, r *bufio.Reader, cfg *exchangeConfig, o *peerOutcome, handshook time.Time) ([]byte, *PeerError) {
	var buf []byte
	var eh extHandshake
	for {
		// Nothing said before or in the extended handshake is metadata:
		// a peer that garbles it fails as a peer (handshake_failed), and
		// the hash is not blamed (invalid_metadata counts against it).
		// The peer set the BEP 10 bit; it counts in extension_support
		// only once its extended handshake decodes, and in
		// extension_bad when that or a message before it does not (a
		// hang-up or a stall before it is in neither).
		id, payload, err := readExtended(r, &buf)
		if err != nil {
			if garbled(err) {
				cfg.Stats.extensionBad.Add(1)
			}
			return nil, wireFailure(err, schema.OutcomeHandshakeFailed, schema.OutcomeHandshakeFailed, "waiting for the extended handshake")
		}
		if id != extHandshakeID {
			continue // nothing is ours to answer before the handshake
		}
		if eh, err = parseExtHandshake(payload); err != nil {
			cfg.Stats.extensionBad.Add(1)
			return nil, failf(schema.OutcomeHandshakeFailed, "%v", err)
		}
		break
	}
	cfg.Stats.extensionSupport.Add(1)
	o.Extended, o.ExtensionDur = true, time.Since(handshook)
	o.MetadataSize = eh.MetadataSize
	switch {
	case eh.UTMetadata == 0:
		return nil, failf(schema.OutcomeNoUTMetadata, "peer's extended handshake has no ut_metadata")
	case eh.MetadataSize == 0:
		return nil, failf(schema.OutcomeNoUTMetadata, "peer announces ut_metadata without metadata_size")
	}
	cfg.Stats.utMetadataSupport.Add(1)
	if eh.MetadataSize > cfg.MaxMetadataSize {
		return nil, failf(schema.OutcomeTooLarge, "peer announces %d bytes of metadata (limit %d)", eh.MetadataSize, cfg.MaxMetadataSize)
	}
	size := int(eh.MetadataSize)
	pieces := (size + metadataPieceSize - 1) / metadataPieceSize
	req := make([]byte, 0, pieces*48)
	for i := range pieces {
		req = appendExtended(req, byte(eh.UTMetadata), appendRequest(nil, i))
	}
	_, _ = w.Write(req)
	// Pieces are kept as they arrive and joined at the end, so memory
	// follows what the peer actually sent, not what it announced.
	got := make([][]byte, pieces)
	var held int64
	defer func() { cfg.Mem.give(ip, held) }()
	for left := pieces; left > 0; {
		id, payload, err := readExtended(r, &buf)
		if err != nil {
			return nil, wireFailure(err, schema.OutcomeInvalidMetadata, schema.OutcomeRejected, "before serving all metadata")
		}
		if id != ourUTMetadataID {
			continue // a repeated extended handshake
		}
		m, err := parseMetadataMsg(payload)
		if err != nil {
			return nil, failf(schema.OutcomeInvalidMetadata, "%v", err)
		}
		switch m.Type {
		case msgReject:
			return nil, failf(schema.OutcomeRejected, "peer rejected metadata piece %d", m.Piece)
		case msgRequest:
			_, _ = w.Write(appendExtended(nil, byte(eh.UTMetadata), appendReject(nil, m.Piece)))
			continue
		case msgData:
		default:
			continue // unknown types are ignored (BEP 9)
		}
		if m.Piece < 0 || m.Piece >= int64(pieces) {
			return nil, failf(schema.OutcomeInvalidMetadata, "peer sent metadata piece %d of %d", m.Piece, pieces)
		}
		if m.TotalSize >= 0 && m.TotalSize != eh.MetadataSize {
			return nil, failf(schema.OutcomeInvalidMetadata, "peer's total_size %d differs from its metadata_size %d", m.TotalSize, eh.MetadataSize)
		}
		want := min(metadataPieceSize, size-int(m.Piece)*metadataPieceSize)
		if len(m.Data) != want {
			return nil, failf(schema.OutcomeInvalidMetadata, "metadata piece %d has %d bytes, want %d", m.Piece, len(m.Data), want)
		}
		if got[m.Piece] == nil {
			switch cfg.Mem.take(ip, int64(len(m.Data))) {
			case memShared:
				// The host's exchanges (this one included) hold its
				// share: a peer-level failure, penalising this
				// endpoint, not the hash's.
				return nil, failf(schema.OutcomeRejected, "the exchanges with %s's host (%s) hold its share of the metadata "+
					"memory (%d bytes): one host may not hold more", ip, cfg.Mem.host(ip), cfg.Mem.share)
			case memFull:
				return nil, failf(schema.OutcomeLocalError, "metadata memory limit (%d bytes) reached: other exchanges hold it", cfg.Mem.limit)
			}
			held += int64(len(m.Data))
			got[m.Piece] = append([]byte(nil), m.Data...)
			left--
		}
	}
	info := make([]byte, 0, size)
	for _, p := range got {
		info = append(info, p...)
	}
	return info, nil
}

// wireFailure classifies a failure to read a wire message: an oversize
// or undecodable message is class garbled; I/O errors go to ioFailure.
func wireFailure(err error, garbledClass, onClose, stage string) *PeerError {
	if garbled(err) {
		return failf(garbledClass, "%s: %v", stage, err)
	}
	return ioFailure(err, onClose, stage)
}

// garbled reports whether err, from readExtended, is a message the peer
// sent that does not decode (too long, or an empty extended message)
// rather than an I/O error.
func garbled(err error) bool {
	return errors.Is(err, errMessageTooLong) || errors.Is(err, infodict.ErrBencode)
}

// appendRequest appends a ut_metadata request dictionary for piece i.
func appendRequest(b []byte, i int) []byte { return appendMetadataMsg(b, msgRequest, int64(i)) }

// appendReject appends a ut_metadata reject dictionary for piece i.
func appendReject(b []byte, i int64) []byte { return appendMetadataMsg(b, msgReject, i) }

// appendMetadataMsg appends a ut_metadata message of type typ for piece i
// that carries no data (BEP 9: a request or a reject).
func appendMetadataMsg(b []byte, typ int64, i int64) []byte {
	e := bencode.Encoder{B: b}
	return e.Dict().Str("msg_type").Int(typ).Str("piece").Int(i).End().B
}

// verifyInfo checks info bytes against a job's 20-byte hash ih, the
// DHT key, and reports which hash of them matched. ih is the truth,
// whatever type the job was labelled with (a label is only what some
// input claimed): SHA-1 of info (v1, or a hybrid torrent's v1 key) or the
// first 20 bytes of its SHA-256 (v2, BEP 52), which then gives the full
// v2 hash. claim, the job's full v2 hash when it gives one (32 bytes
// starting with ih: an imported list's 64-hex line, a magnet's btmh,
// unchecked), is a claim too: metadata whose SHA-256 it is is v2, and
// metadata that proves ih otherwise refutes it (refuted), the type and
// full hash returned being what the metadata proved (none for v1).
func verifyInfo(info []byte, ih [20]byte, claim []byte) (typ int8, full []byte, refuted, ok bool) {
	sum := sha256.Sum256(info)
	claimed := len(claim) == 32
	switch {
	case claimed && bytes.Equal(sum[:], claim):
		return schema.HashV2, sum[:], false, true
	case sha1.Sum(info) == ih:
		return schema.HashV1, nil, claimed, true
	case bytes.Equal(sum[:20], ih[:]):
		return schema.HashV2, sum[:], claimed, true
	}
	return schema.HashV2, nil, false, false
}

// invalidDetail is the detail of verified info bytes that ParseAs
// refused: for a dictionary of the other version than the hash it
// matched, which hash matched, and the infohash it has of its own.
func invalidDetail(err error, info []byte, typ int8) string {
	if !errors.Is(err, infodict.ErrVersion) {
		return err.Error()
	}
	if typ == schema.HashV2 {
		s1 := sha1.Sum(info)
		return "the metadata's SHA-256 is the infohash (v2), but " + err.Error() + "; its SHA-1 is " + hex.EncodeToString(s1[:])
	}
	sum := sha256.Sum256(info)
	return "the metadata's SHA-1 is the infohash (v1), but " + err.Error() + "; its SHA-256 is " + hex.EncodeToString(sum[:])
}

// refutedDetail is the detail of an ok result whose job's full v2 hash,
// claim, the metadata refuted: typ and full are what it proved.
func refutedDetail(claim []byte, typ int8, full []byte) string {
	s := "the job's info_hash_v2 " + hex.EncodeToString(claim) + " was wrong: the metadata proved the infohash "
	if typ == schema.HashV1 {
		return s + "v1 (SHA-1)"
	}
	return s + "v2 with full hash " + hex.EncodeToString(full)
}

// mismatchDetail says what info bytes that verifyInfo refused hash to.
func mismatchDetail(info []byte, claim []byte) string {
	sum := sha256.Sum256(info)
	s1 := sha1.Sum(info)
	s := "metadata from peer hashes to " + hex.EncodeToString(s1[:]) + " (SHA-1) and "
	if len(claim) == 32 {
		return s + hex.EncodeToString(sum[:]) + " (SHA-256): neither is the infohash nor the job's v2 hash " + hex.EncodeToString(claim)
	}
	return s + hex.EncodeToString(sum[:20]) + " (SHA-256, truncated)"
}
