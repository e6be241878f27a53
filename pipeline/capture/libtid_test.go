package capture

import (
	"encoding/binary"
	"net"
	"testing"

	"github.com/anacrolix/dht/v2/transactions"

	"github.com/infohash/infohash/formats/krpc"
)

// TestLibraryTIDsAreNotGuessable: a response to one of the library's
// queries is taken only with the transaction ID that went on the wire.
// anacrolix/dht issues its IDs from one counter per process (0, 1, 2...,
// as uvarints) and takes a response from the queried address with the
// ID: a forger who spoofs that address (a bootstrap router, which every
// run queries first) and guesses the count fed the library nodes of its
// choice, and confirmed the address under an ID of its choice for the
// replies to hand out (confirm.go). The library's IDs are replaced on
// the wire by random ones, as the walk's are.
func TestLibraryTIDsAreNotGuessable(t *testing.T) {
	for _, tc := range []struct {
		name    string
		forgedT func(wire []byte, guess string) []byte
		wantID  string
	}{
		{"the library's own ID, guessed from its counter", func(_ []byte, guess string) []byte { return []byte(guess) }, "REAL-ID-0123456789ab"},
		{"the ID on the wire, as the queried node saw it", func(wire []byte, _ string) []byte { return wire }, "FORGED-ID-0123456789"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := libraryNode(t)
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() { defer close(done); n.serve(stop) }()
			defer func() { close(stop); <-done }()

			peer, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				t.Fatal(err)
			}
			defer peer.Close()
			// The next ID the library issues: the counter's next but one.
			var b [binary.MaxVarintLen64]byte
			k := []byte(transactions.DefaultIdIssuer.Issue())
			next, _ := binary.Uvarint(k)
			guess := string(b[:binary.PutUvarint(b[:], next+1)])

			res := make(chan []byte, 1)
			go func() {
				r := n.srv.Ping(peer.LocalAddr().(*net.UDPAddr))
				if r.Err != nil || r.Reply.R == nil {
					res <- nil
					return
				}
				res <- r.Reply.R.ID[:]
			}()
			buf := make([]byte, 1<<16)
			nb, from, err := peer.ReadFromUDPAddrPort(buf)
			if err != nil {
				t.Fatal(err)
			}
			var q krpc.Msg
			if err := krpc.Parse(buf[:nb], &q); err != nil || string(q.Q) != "ping" {
				t.Fatalf("the library sent %q (%v), want a ping", buf[:nb], err)
			}
			wire := append([]byte(nil), q.T...)
			// The forged response first, from the queried address; then the
			// queried node's own.
			forged := krpc.AppendReply(nil, tc.forgedT(wire, guess), krpc.Reply{ID: []byte("FORGED-ID-0123456789")}, nil)
			real := krpc.AppendReply(nil, wire, krpc.Reply{ID: []byte("REAL-ID-0123456789ab")}, nil)
			if tc.wantID == "REAL-ID-0123456789ab" && string(wire) == guess {
				t.Logf("the ID on the wire is the library's own (%x): the forged response carries it", wire)
			}
			for _, p := range [][]byte{forged, real} {
				if _, err := peer.WriteToUDPAddrPort(p, from); err != nil {
					t.Fatal(err)
				}
			}
			if got := <-res; string(got) != tc.wantID {
				t.Fatalf("the library's ping was answered by %q, want %q", got, tc.wantID)
			}
		})
	}
}
