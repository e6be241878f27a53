package fetch

import (
	"bytes"
	"flag"
	"fmt"
	"strconv"
	"testing"

	"github.com/infohash/infohash/internal/goldentest"
)

// update rewrites the golden files under testdata/ (go test -update).
var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestOurExtMessagesGolden compares the BEP 9/10 messages fetch sends with
// testdata/extmsg.golden, one "name quoted-bytes" line each, so that a
// change to how they are encoded cannot change a byte on the wire
// unnoticed (go test -run TestOurExtMessagesGolden -update rewrites it).
func TestOurExtMessagesGolden(t *testing.T) {
	msgs := []struct {
		name string
		b    []byte
	}{
		{"ext_handshake", ourExtHandshake},
		{"request_0", appendRequest(nil, 0)},
		{"request_37", appendRequest(nil, 37)},
		{"request_appended", appendRequest([]byte("prefix:"), 1)},
		{"reject_0", appendReject(nil, 0)},
		{"reject_negative", appendReject(nil, -5)},
		{"reject_max", appendReject(nil, 1<<63-1)},
	}
	var got []byte
	for _, m := range msgs {
		got = fmt.Appendf(got, "%s %s\n", m.name, strconv.Quote(string(m.b)))
	}
	const golden = "testdata/extmsg.golden"
	goldentest.Check(t, golden, got, *update)
}

func TestParseExtHandshake(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    extHandshake
		wantErr bool
	}{
		{"libtorrent-like", "d1:md11:ut_metadatai3e6:ut_pexi1ee13:metadata_sizei31235e4:reqqi250e1:v13:qBittorrent/4e", extHandshake{3, 31235}, false},
		{"no ut_metadata", "d1:md6:ut_pexi1eee", extHandshake{}, false},
		{"disabled ut_metadata", "d1:md11:ut_metadatai0eee", extHandshake{}, false},
		{"no size", "d1:md11:ut_metadatai2eee", extHandshake{2, 0}, false},
		{"odd types elsewhere are fine", "d1:md6:ut_pex3:abc11:ut_metadatai2ee13:metadata_sizei10e6:yourip4:\x7f\x00\x00\x01e", extHandshake{2, 10}, false},
		{"no m at all", "d1:v3:abce", extHandshake{}, false},
		{"id too big", "d1:md11:ut_metadatai256eee", extHandshake{}, true},
		{"id not int", "d1:md11:ut_metadata1:xee", extHandshake{}, true},
		{"negative size", "d1:md11:ut_metadatai1ee13:metadata_sizei-5ee", extHandshake{}, true},
		{"size not int", "d1:md11:ut_metadatai1ee13:metadata_size2:10e", extHandshake{}, true},
		{"m not a dict", "d1:mi1ee", extHandshake{}, true},
		{"not a dict", "li1ee", extHandshake{}, true},
		{"truncated", "d1:md11:ut_metadatai1e", extHandshake{}, true},
		{"trailing", "d1:md11:ut_metadatai1eeeXX", extHandshake{}, true},
		{"empty", "", extHandshake{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseExtHandshake([]byte(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseMetadataMsg(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    metadataMsg
		wantErr bool
	}{
		{"data", "d8:msg_typei1e5:piecei0e10:total_sizei5eeHELLO", metadataMsg{Type: 1, Piece: 0, TotalSize: 5, Data: []byte("HELLO")}, false},
		{"data without total_size", "d8:msg_typei1e5:piecei2eeXY", metadataMsg{Type: 1, Piece: 2, TotalSize: -1, Data: []byte("XY")}, false},
		{"reject", "d8:msg_typei2e5:piecei7ee", metadataMsg{Type: 2, Piece: 7, TotalSize: -1, Data: []byte{}}, false},
		{"request", "d8:msg_typei0e5:piecei1ee", metadataMsg{Type: 0, Piece: 1, TotalSize: -1, Data: []byte{}}, false},
		{"unknown type, ignored whatever it carries", "d8:msg_typei9e3:fooi1eeXX", metadataMsg{Type: 9, TotalSize: -1}, false},
		{"trailing bytes after reject", "d8:msg_typei2e5:piecei7eeXX", metadataMsg{}, true},
		{"no msg_type", "d5:piecei0ee", metadataMsg{}, true},
		{"no piece", "d8:msg_typei1ee", metadataMsg{}, true},
		{"truncated", "d8:msg_typei1e5:piecei0e10:total_size", metadataMsg{}, true},
		{"string msg_type", "d8:msg_type1:15:piecei0ee", metadataMsg{}, true},
		{"not a dict", "i1e", metadataMsg{}, true},
		{"empty", "", metadataMsg{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseMetadataMsg([]byte(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if got.Type != tt.want.Type || got.Piece != tt.want.Piece || got.TotalSize != tt.want.TotalSize || !bytes.Equal(got.Data, tt.want.Data) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// FuzzParseExtHandshake: peer-supplied extended handshakes never panic,
// accepted ones are in range and read as anacrolix reads them
// (checkExtHandshakeAnacrolix).
func FuzzParseExtHandshake(f *testing.F) {
	f.Add([]byte("d1:md11:ut_metadatai3e6:ut_pexi1ee13:metadata_sizei31235ee"))
	f.Add([]byte("d1:md6:ut_pexi1eee"))
	f.Add([]byte("d1:mi1ee"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := parseExtHandshake(b)
		if err == nil && (h.UTMetadata < 0 || h.UTMetadata > 255 || h.MetadataSize < 0) {
			t.Fatalf("out of range: %+v", h)
		}
		if err == nil {
			checkExtHandshakeAnacrolix(t, b, h)
		}
	})
}

// FuzzParseMetadataMsg: peer-supplied ut_metadata messages never panic,
// the data of an accepted message is a suffix of the input, and it reads
// as anacrolix reads it (checkMetadataMsgAnacrolix).
func FuzzParseMetadataMsg(f *testing.F) {
	f.Add([]byte("d8:msg_typei1e5:piecei0e10:total_sizei5eeHELLO"))
	f.Add([]byte("d8:msg_typei2e5:piecei7ee"))
	f.Add([]byte("d8:msg_typei0e5:piecei1ee"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseMetadataMsg(b)
		if err != nil {
			return
		}
		if !bytes.HasSuffix(b, m.Data) || (m.Type != msgData && len(m.Data) != 0) {
			t.Fatalf("data %q is not the tail of %q", m.Data, b)
		}
		checkMetadataMsgAnacrolix(t, b, m)
	})
}
