package fetch

import (
	"fmt"

	"github.com/anacrolix/torrent/bencode"

	"github.com/infohash/infohash/formats/infodict"
)

// BEP 9 ut_metadata message types.
const (
	msgRequest = 0
	msgData    = 1
	msgReject  = 2
)

// metadataPieceSize is the BEP 9 piece size: every piece but the last is
// exactly this long.
const metadataPieceSize = 16 << 10

// extHandshake is what fetch needs from a peer's BEP 10 extended handshake.
type extHandshake struct {
	UTMetadata   int   // the peer's message id for ut_metadata; 0 = not supported
	MetadataSize int64 // announced size of the info dictionary; 0 = not announced
}

// rawExtHandshake is decoded leniently: values are kept as raw bencode so
// that keys fetch does not use can have any type.
type rawExtHandshake struct {
	M            map[string]bencode.Bytes `bencode:"m"`
	MetadataSize bencode.Bytes            `bencode:"metadata_size"`
}

// parseExtHandshake decodes the payload of an extended handshake (extended
// message id 0). Any error means the message is not valid bencode of the
// expected shape.
func parseExtHandshake(payload []byte) (extHandshake, error) {
	var h extHandshake
	var raw rawExtHandshake
	if err := infodict.DecodeDict(payload, &raw); err != nil {
		return h, fmt.Errorf("extended handshake: %w", err)
	}
	if v, ok := raw.M["ut_metadata"]; ok {
		id, err := infodict.Int(v)
		if err != nil || id < 0 || id > 255 {
			return h, fmt.Errorf("extended handshake: ut_metadata id %q", infodict.Clip(v))
		}
		h.UTMetadata = int(id)
	}
	if raw.MetadataSize != nil {
		n, err := infodict.Int(raw.MetadataSize)
		if err != nil || n < 0 {
			return h, fmt.Errorf("extended handshake: metadata_size %q", infodict.Clip(raw.MetadataSize))
		}
		h.MetadataSize = n
	}
	return h, nil
}

// metadataMsg is one decoded ut_metadata message.
type metadataMsg struct {
	Type      int64
	Piece     int64
	TotalSize int64  // -1 when absent
	Data      []byte // the piece bytes after the dictionary (data messages); aliases the payload
}

type rawMetadataMsg struct {
	MsgType   bencode.Bytes `bencode:"msg_type"`
	Piece     bencode.Bytes `bencode:"piece"`
	TotalSize bencode.Bytes `bencode:"total_size"`
}

// parseMetadataMsg decodes a ut_metadata message: a bencoded dictionary,
// followed by the piece bytes for data messages. A message of a type BEP 9
// does not define is returned with only Type set, for the caller to ignore.
func parseMetadataMsg(payload []byte) (metadataMsg, error) {
	m := metadataMsg{TotalSize: -1}
	n, err := infodict.Scan(payload, 4)
	if err != nil {
		return m, fmt.Errorf("ut_metadata message: %w", err)
	}
	var raw rawMetadataMsg
	if err := infodict.DecodeDict(payload[:n], &raw); err != nil {
		return m, fmt.Errorf("ut_metadata message: %w", err)
	}
	if m.Type, err = infodict.Int(raw.MsgType); err != nil {
		return m, fmt.Errorf("ut_metadata message: msg_type: %w", err)
	}
	if m.Type != msgRequest && m.Type != msgData && m.Type != msgReject {
		// BEP 9: an unrecognised message type must be ignored, so
		// neither its keys nor what follows the dictionary are checked.
		return m, nil
	}
	if m.Piece, err = infodict.Int(raw.Piece); err != nil {
		return m, fmt.Errorf("ut_metadata message: piece: %w", err)
	}
	if raw.TotalSize != nil {
		if m.TotalSize, err = infodict.Int(raw.TotalSize); err != nil {
			return m, fmt.Errorf("ut_metadata message: total_size: %w", err)
		}
	}
	m.Data = payload[n:]
	if m.Type != msgData && len(m.Data) > 0 {
		return m, fmt.Errorf("ut_metadata message: %d bytes after a msg_type %d dictionary", len(m.Data), m.Type)
	}
	return m, nil
}
