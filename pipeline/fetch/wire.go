package fetch

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	pp "github.com/anacrolix/torrent/peer_protocol"

	"github.com/infohash/infohash/formats/infodict"
)

// handshakeLen is the length of a BEP 3 handshake: protocol string,
// reserved bytes, infohash and peer id.
const handshakeLen = 68

// maxMessageLen bounds any one wire message fetch accepts. Extension
// messages fetch reads are far smaller (a metadata piece is 16 KiB plus a
// short dictionary); longer messages of other types are skipped unread up
// to this size.
const maxMessageLen = 2 << 20

// maxExtMessageLen bounds extension messages fetch decodes.
const maxExtMessageLen = metadataPieceSize + 1<<10

// Extended message ids: 0 is the extended handshake; ourUTMetadataID is
// the id we announce for ut_metadata, so peers send metadata messages with it.
const (
	extHandshakeID  = 0
	ourUTMetadataID = 1
)

// ourExtensionBits announces BEP 10 (LTEP) and nothing else.
var ourExtensionBits = pp.NewPeerExtensionBytes(pp.ExtensionBitLtep)

// appendHandshake appends our BEP 3 handshake for infohash ih.
func appendHandshake(b []byte, ih, peerID [20]byte) []byte {
	b = append(b, pp.Protocol...)
	b = append(b, ourExtensionBits[:]...)
	b = append(b, ih[:]...)
	return append(b, peerID[:]...)
}

// peerHandshake is the peer's side of the BEP 3 handshake.
type peerHandshake struct {
	Bits     pp.PeerExtensionBits
	InfoHash [20]byte
	PeerID   [20]byte
}

var errBadProtocol = errors.New("not a BitTorrent handshake")

// readHandshake reads the peer's 68-byte handshake. When it fails, got
// is how many bytes of it arrived, and h holds the infohash if they
// include it (got >= infoHashEnd). Bytes that cannot begin a BitTorrent
// handshake fail as errBadProtocol, however few arrived.
func readHandshake(r *bufio.Reader) (h peerHandshake, got int, err error) {
	b, err := r.Peek(handshakeLen)
	if n := min(len(b), len(pp.Protocol)); string(b[:n]) != pp.Protocol[:n] {
		return h, len(b), errBadProtocol
	}
	if err != nil {
		if len(b) >= infoHashEnd {
			copy(h.InfoHash[:], b[28:infoHashEnd])
		}
		return h, len(b), err
	}
	copy(h.Bits[:], b[20:28])
	copy(h.InfoHash[:], b[28:infoHashEnd])
	copy(h.PeerID[:], b[infoHashEnd:68])
	_, _ = r.Discard(handshakeLen)
	return h, handshakeLen, nil
}

// infoHashEnd is where the infohash ends in a handshake.
const infoHashEnd = 48

// appendExtended appends a BEP 10 extended message with id and payload.
func appendExtended(b []byte, id byte, payload []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(2+len(payload)))
	b = append(b, byte(pp.Extended), id)
	return append(b, payload...)
}

// errMessageTooLong is returned for a message over maxMessageLen.
var errMessageTooLong = errors.New("message too long")

// readExtended reads wire messages until an extended message arrives and
// returns its id and payload (valid until the next call; it aliases buf or
// the reader's buffer). Other message types are skipped without being
// decoded: fetch asks for nothing but metadata.
func readExtended(r *bufio.Reader, buf *[]byte) (id byte, payload []byte, err error) {
	for {
		var hdr [4]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return 0, nil, err
		}
		n := binary.BigEndian.Uint32(hdr[:])
		if n == 0 {
			continue // keep-alive
		}
		if n > maxMessageLen {
			return 0, nil, fmt.Errorf("%w: %d bytes", errMessageTooLong, n)
		}
		typ, err := r.ReadByte()
		if err != nil {
			return 0, nil, noEOF(err)
		}
		if pp.MessageType(typ) != pp.Extended {
			if _, err := r.Discard(int(n - 1)); err != nil {
				return 0, nil, noEOF(err)
			}
			continue
		}
		if n < 2 {
			return 0, nil, fmt.Errorf("%w: empty extended message", infodict.ErrBencode)
		}
		if id, err = r.ReadByte(); err != nil {
			return 0, nil, noEOF(err)
		}
		if id != extHandshakeID && id != ourUTMetadataID {
			// An extension we never announced: not ours to read.
			if _, err := r.Discard(int(n - 2)); err != nil {
				return 0, nil, noEOF(err)
			}
			continue
		}
		if n-2 > maxExtMessageLen {
			return 0, nil, fmt.Errorf("%w: extended message of %d bytes", errMessageTooLong, n)
		}
		if cap(*buf) < int(n-2) {
			*buf = make([]byte, n-2, maxExtMessageLen)
		}
		payload = (*buf)[:n-2]
		if _, err := io.ReadFull(r, payload); err != nil {
			return 0, nil, noEOF(err)
		}
		return id, payload, nil
	}
}

// noEOF reports a clean EOF inside a message as unexpected.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
