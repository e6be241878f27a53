package fetch

import (
	"bytes"
	"testing"

	"github.com/anacrolix/torrent/bencode"
	pp "github.com/anacrolix/torrent/peer_protocol"
)

// checkExtHandshakeAnacrolix fails t when anacrolix's
// ExtendedHandshakeMessage, decoding a payload b that parseExtHandshake
// read as h, reads another ut_metadata id or metadata_size. A payload
// anacrolix refuses (a key it types otherwise, unsorted keys) or panics
// on is left out.
func checkExtHandshakeAnacrolix(t *testing.T, b []byte, h extHandshake) {
	t.Helper()
	var ah pp.ExtendedHandshakeMessage
	if !anacrolixDecodes(func() error { return bencode.Unmarshal(b, &ah) }) {
		return
	}
	if int(ah.M[pp.ExtensionNameMetadata]) != h.UTMetadata || int64(ah.MetadataSize) != h.MetadataSize {
		t.Fatalf("%q: ut_metadata %d, metadata_size %d; anacrolix %d, %d", b, h.UTMetadata, h.MetadataSize,
			ah.M[pp.ExtensionNameMetadata], ah.MetadataSize)
	}
}

// checkMetadataMsgAnacrolix fails t when anacrolix's
// ExtendedMetadataRequestMsg, decoded from the front of a ut_metadata
// payload b that parseMetadataMsg read as m of a type BEP 9 defines,
// reads another msg_type, piece or total_size (0 when absent), or leaves
// other bytes after the dictionary than m's data.
func checkMetadataMsgAnacrolix(t *testing.T, b []byte, m metadataMsg) {
	t.Helper()
	if m.Type != msgRequest && m.Type != msgData && m.Type != msgReject {
		return
	}
	var am pp.ExtendedMetadataRequestMsg
	d := bencode.NewDecoder(bytes.NewReader(b))
	if !anacrolixDecodes(func() error { return d.Decode(&am) }) {
		return
	}
	total := m.TotalSize
	if total < 0 {
		total = 0
	}
	if int64(am.Type) != m.Type || int64(am.Piece) != m.Piece || int64(am.TotalSize) != total || !bytes.Equal(b[d.Offset:], m.Data) {
		t.Fatalf("%q: %+v; anacrolix %+v and %d bytes of data", b, m, am, len(b)-int(d.Offset))
	}
}

// anacrolixDecodes reports whether decode, a call into anacrolix's
// bencode, succeeds; a panic in the library (not ours to fix) is a
// refusal.
func anacrolixDecodes(decode func() error) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return decode() == nil
}

// TestExtMsgAnacrolix: anacrolix reads the seeds of FuzzParseExtHandshake
// and FuzzParseMetadataMsg, so that the checks compare rather than skip.
func TestExtMsgAnacrolix(t *testing.T) {
	for _, b := range []string{"d1:md11:ut_metadatai3e6:ut_pexi1ee13:metadata_sizei31235ee", "d1:md6:ut_pexi1eee"} {
		var ah pp.ExtendedHandshakeMessage
		if err := bencode.Unmarshal([]byte(b), &ah); err != nil {
			t.Fatalf("%q: anacrolix: %v", b, err)
		}
		h, err := parseExtHandshake([]byte(b))
		if err != nil {
			t.Fatal(err)
		}
		checkExtHandshakeAnacrolix(t, []byte(b), h)
	}
	for _, b := range []string{"d8:msg_typei1e5:piecei0e10:total_sizei5eeHELLO", "d8:msg_typei2e5:piecei7ee"} {
		var am pp.ExtendedMetadataRequestMsg
		if err := bencode.NewDecoder(bytes.NewReader([]byte(b))).Decode(&am); err != nil {
			t.Fatalf("%q: anacrolix: %v", b, err)
		}
		m, err := parseMetadataMsg([]byte(b))
		if err != nil {
			t.Fatal(err)
		}
		checkMetadataMsgAnacrolix(t, []byte(b), m)
	}
}
