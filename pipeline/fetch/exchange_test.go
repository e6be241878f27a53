package fetch

import (
	"context"
	"crypto/sha1"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	pp "github.com/anacrolix/torrent/peer_protocol"

	"github.com/infohash/infohash/formats/schema"
)

// fuzzInfo is the torrent the fuzzed peer is asked for.
var fuzzInfo = []byte("d6:lengthi5e4:name1:x12:piece lengthi16384ee")

// peerStream builds what a peer sends after its handshake: an extended
// handshake announcing ut_metadata as id 1 and size n, then msgs.
func peerStream(size int, msgs ...[]byte) []byte {
	b := appendExtended(nil, 0, fmt.Appendf(nil, "d1:md11:ut_metadatai1ee13:metadata_sizei%dee", size))
	for _, m := range msgs {
		b = appendExtended(b, ourUTMetadataID, m)
	}
	return b
}

// FuzzTalk feeds arbitrary bytes, as a peer's side of the conversation
// after a handshake for the right infohash, to the exchange: it never
// panics or hangs, and ends with ok only for metadata that verifies.
func FuzzTalk(f *testing.F) {
	ltep := pp.NewPeerExtensionBytes(pp.ExtensionBitLtep)
	data := append([]byte(fmt.Sprintf("d8:msg_typei1e5:piecei0e10:total_sizei%dee", len(fuzzInfo))), fuzzInfo...)
	f.Add(ltep[:], peerStream(len(fuzzInfo), data))
	f.Add(ltep[:], peerStream(len(fuzzInfo), []byte("d8:msg_typei2e5:piecei0ee")))
	f.Add(ltep[:], peerStream(99999999))
	f.Add(ltep[:], []byte{0, 0, 0, 3, 5, 0xff, 0})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0}, []byte{})
	ih := sha1.Sum(fuzzInfo)
	f.Fuzz(func(t *testing.T, bits, stream []byte) {
		o := runTalk(bits, stream)
		switch {
		case o.Err == nil:
			if sha1.Sum(o.Meta.InfoBytes) != ih {
				t.Fatal("ok without verified metadata")
			}
		case precedence[o.Err.Class] == 0:
			t.Fatalf("unknown class %q", o.Err.Class)
		case o.Err.Class == schema.OutcomeTimeout:
			t.Fatalf("peer hung up, but the exchange timed out: %v", o.Err)
		}
	})
}

// runTalk runs the exchange against a peer that answers the handshake for
// fuzzInfo's hash with reserved bytes bits, then sends stream and hangs up.
func runTalk(bits, stream []byte) peerOutcome {
	ih := sha1.Sum(fuzzInfo)
	ours, theirs := net.Pipe()
	defer ours.Close()
	go func() {
		defer theirs.Close()
		var hs [handshakeLen]byte
		if _, err := io.ReadFull(theirs, hs[:]); err != nil {
			return
		}
		go io.Copy(io.Discard, theirs)
		reply := append([]byte(pp.Protocol), (append(bits, make([]byte, 8)...))[:8]...)
		reply = append(reply, ih[:]...)
		reply = append(reply, make([]byte, 20)...)
		theirs.Write(append(reply, stream...))
	}()
	ctx, cancel := context.WithTimeout(context.Background(), backstop)
	defer cancel()
	cfg := &exchangeConfig{InfoHash: ih, MaxMetadataSize: 1 << 20, Stats: newCounters(), Mem: &memBudget{limit: 1 << 20}}
	var o peerOutcome
	talk(ctx, ours, cfg, &o, time.Now(), time.Now())
	return o
}

func TestTalk(t *testing.T) {
	ltep := pp.NewPeerExtensionBytes(pp.ExtensionBitLtep)
	data := func(piece, total int, b []byte) []byte {
		return append(fmt.Appendf(nil, "d8:msg_typei1e5:piecei%de10:total_sizei%dee", piece, total), b...)
	}
	n := len(fuzzInfo)
	tests := []struct {
		name   string
		bits   []byte
		stream []byte
		want   string
	}{
		{"serves", ltep[:], peerStream(n, data(0, n, fuzzInfo)), schema.OutcomeOK},
		{"skips other messages", ltep[:], append([]byte{0, 0, 0, 0, 0, 0, 0, 3, 5, 0xff, 0, 0, 0, 0, 1, 1}, peerStream(n, data(0, n, fuzzInfo))...), schema.OutcomeOK},
		// BEP 9: an unrecognised msg_type must be ignored, whatever it
		// carries (it used to end the exchange as invalid_metadata).
		{"unknown msg_type with a payload", ltep[:], peerStream(n, []byte("d8:msg_typei9ee-future-"), data(0, n, fuzzInfo)), schema.OutcomeOK},
		{"unknown msg_type without piece", ltep[:], peerStream(n, []byte("d8:msg_typei3e4:whati1ee"), data(0, n, fuzzInfo)), schema.OutcomeOK},
		{"duplicate piece", ltep[:], peerStream(n, data(0, n, fuzzInfo), data(0, n, fuzzInfo)), schema.OutcomeOK},
		{"rejects", ltep[:], peerStream(n, []byte("d8:msg_typei2e5:piecei0ee")), schema.OutcomeRejected},
		{"hangs up after its handshake", ltep[:], peerStream(n), schema.OutcomeRejected},
		{"too large", ltep[:], peerStream(1<<20 + 1), schema.OutcomeTooLarge},
		{"short piece", ltep[:], peerStream(n, data(0, n, fuzzInfo[1:])), schema.OutcomeInvalidMetadata},
		{"piece out of range", ltep[:], peerStream(n, data(1, n, fuzzInfo)), schema.OutcomeInvalidMetadata},
		{"total_size disagrees", ltep[:], peerStream(n, data(0, n+1, fuzzInfo)), schema.OutcomeInvalidMetadata},
		{"other bytes", ltep[:], peerStream(n, data(0, n, []byte("d6:lengthi6e4:name1:x12:piece lengthi16384ee"))), schema.OutcomeHashMismatch},
		// What comes before and in the extended handshake is no
		// metadata: garbling it fails the peer, not the hash.
		{"oversized message before the extended handshake", ltep[:], []byte{0x7f, 0, 0, 0, 20}, schema.OutcomeHandshakeFailed},
		{"empty extended message", ltep[:], []byte{0, 0, 0, 1, 20}, schema.OutcomeHandshakeFailed},
		{"garbage extended handshake", ltep[:], appendExtended(nil, 0, []byte("d1:m")), schema.OutcomeHandshakeFailed},
		{"extended handshake not a dictionary", ltep[:], appendExtended(nil, 0, []byte("i5e")), schema.OutcomeHandshakeFailed},
		{"ut_metadata id out of range", ltep[:], appendExtended(nil, 0, []byte("d1:md11:ut_metadatai300ee13:metadata_sizei5ee")), schema.OutcomeHandshakeFailed},
		{"oversized message after the extended handshake", ltep[:], append(peerStream(n), 0x7f, 0, 0, 0, 20), schema.OutcomeInvalidMetadata},
		{"no metadata_size", ltep[:], appendExtended(nil, 0, []byte("d1:md11:ut_metadatai1eee")), schema.OutcomeNoUTMetadata},
		{"ut_metadata disabled (id 0)", ltep[:], appendExtended(nil, 0, []byte("d1:md11:ut_metadatai0ee13:metadata_sizei5ee")), schema.OutcomeNoUTMetadata},
		{"metadata_size 0", ltep[:], appendExtended(nil, 0, []byte("d1:md11:ut_metadatai1ee13:metadata_sizei0ee")), schema.OutcomeNoUTMetadata},
		// A repeated extended handshake changes nothing once pieces are
		// asked for (the first one's id and size hold).
		{"extended handshake again, ut_metadata off and another size", ltep[:],
			append(append(peerStream(n), appendExtended(nil, 0, []byte("d1:md11:ut_metadatai0ee13:metadata_sizei999ee"))...),
				appendExtended(nil, ourUTMetadataID, data(0, n, fuzzInfo))...), schema.OutcomeOK},
		// 16 KiB: the size a piece -1 would have by the size rule alone.
		{"negative piece index", ltep[:], peerStream(n, data(-1, n, make([]byte, metadataPieceSize))), schema.OutcomeInvalidMetadata},
		{"data after the last piece", ltep[:], peerStream(n, data(0, n, fuzzInfo), []byte("trailing junk")), schema.OutcomeOK},
		{"reject after the last piece", ltep[:], peerStream(n, data(0, n, fuzzInfo), []byte("d8:msg_typei2e5:piecei0ee")), schema.OutcomeOK},
		{"peer asks us for metadata first", ltep[:], peerStream(n, []byte("d8:msg_typei0e5:piecei0ee"), data(0, n, fuzzInfo)), schema.OutcomeOK},
		{"no BEP 10", make([]byte, 8), nil, schema.OutcomeNoExtension},
		{"closes before extended handshake", ltep[:], nil, schema.OutcomeHandshakeFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := runTalk(tt.bits, tt.stream)
			got := schema.OutcomeOK
			if o.Err != nil {
				got = o.Err.Class
			}
			if got != tt.want {
				t.Fatalf("class %s (%v), want %s", got, o.Err, tt.want)
			}
		})
	}
}

// TestHandshakeHangUp: a peer that takes our handshake, which names the
// infohash, and hangs up without answering it (or answers for another
// infohash) does not serve this torrent: peer_lacks_torrent, which merge
// does not hold against the endpoint. A peer that answered for our
// infohash before hanging up, sent something that is no handshake, or
// hung up before our handshake reached it, failed by itself:
// handshake_failed.
func TestHandshakeHangUp(t *testing.T) {
	ih := sha1.Sum(fuzzInfo)
	other := ih
	other[0] ^= 0xff
	ltep := pp.NewPeerExtensionBytes(pp.ExtensionBitLtep)
	hs := func(h [20]byte) []byte {
		b := append([]byte(pp.Protocol), ltep[:]...)
		b = append(b, h[:]...)
		return append(b, make([]byte, 20)...)
	}
	tests := []struct {
		name     string
		readOurs bool   // the peer reads our handshake before it answers
		answer   []byte // what it sends before it hangs up
		want     string
	}{
		{"hangs up on our infohash", true, nil, schema.OutcomePeerLacksTorrent},
		{"hangs up after its protocol header", true, hs(ih)[:28], schema.OutcomePeerLacksTorrent},
		{"answers for another infohash", true, hs(other), schema.OutcomePeerLacksTorrent},
		{"hangs up mid-answer for another infohash", true, hs(other)[:50], schema.OutcomePeerLacksTorrent},
		{"hangs up after answering for our infohash", true, hs(ih)[:50], schema.OutcomeHandshakeFailed},
		{"not BitTorrent", true, []byte("HTTP/1.1 400 Bad Request\r\n\r\n"), schema.OutcomeHandshakeFailed},
		{"a few bytes of garbage", true, []byte{1, 2, 3}, schema.OutcomeHandshakeFailed},
		{"hangs up before reading our handshake", false, nil, schema.OutcomeHandshakeFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ours, theirs := net.Pipe()
			defer ours.Close()
			go func() {
				defer theirs.Close()
				if !tt.readOurs {
					return
				}
				var b [handshakeLen]byte
				if _, err := io.ReadFull(theirs, b[:]); err != nil {
					return
				}
				theirs.Write(tt.answer)
			}()
			ctx, cancel := context.WithTimeout(context.Background(), backstop)
			defer cancel()
			cfg := &exchangeConfig{InfoHash: ih, MaxMetadataSize: 1 << 20, Stats: newCounters(), Mem: &memBudget{limit: 1 << 20}}
			var o peerOutcome
			talk(ctx, ours, cfg, &o, time.Now(), time.Now())
			if o.Err == nil || o.Err.Class != tt.want {
				t.Fatalf("got %v, want %s", o.Err, tt.want)
			}
		})
	}
}
