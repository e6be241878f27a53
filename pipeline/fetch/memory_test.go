package fetch

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	pp "github.com/anacrolix/torrent/peer_protocol"

	"github.com/infohash/infohash/formats/schema"
)

// startHoarder starts a TCP peer on 127.0.0.1 that announces size bytes
// of metadata for any infohash, answers every request but the last piece's
// with piece-sized garbage, and then stays silent: each exchange with it
// holds size-16 KiB bytes until it times out.
func startHoarder(t *testing.T, size int) string { return startHoarderOn(t, "127.0.0.1", size) }

// startHoarderOn starts a hoarder (see startHoarder) on a free port of
// ip, a loopback address (all of 127/8 is loopback on Linux: distinct
// ones stand for distinct hosts).
func startHoarderOn(t *testing.T, ip string, size int) string {
	t.Helper()
	ln, err := net.Listen("tcp4", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { defer c.Close(); hoard(c, size) })
		}
	})
	return ln.Addr().String()
}

func hoard(c net.Conn, size int) {
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReader(c)
	var hs [handshakeLen]byte
	if _, err := io.ReadFull(r, hs[:]); err != nil {
		return
	}
	w := bufio.NewWriter(c)
	w.Write(append(append(append([]byte(pp.Protocol), ourExtensionBits[:]...), hs[28:48]...), "-HO0001-hoarder00001"...))
	w.Write(appendExtended(nil, 0, fmt.Appendf(nil, "d1:md11:ut_metadatai7ee13:metadata_sizei%dee", size)))
	w.Flush()
	pieces := (size + metadataPieceSize - 1) / metadataPieceSize
	junk := make([]byte, metadataPieceSize)
	for i := 0; i < pieces-1; i++ {
		msg := fmt.Appendf(nil, "d8:msg_typei1e5:piecei%de10:total_sizei%dee", i, size)
		w.Write(appendExtended(nil, ourUTMetadataID, append(msg, junk...)))
	}
	w.Flush()
	for { // read (and ignore) until the fetcher hangs up
		var hdr [4]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return
		}
		if _, err := r.Discard(int(binary.BigEndian.Uint32(hdr[:]))); err != nil {
			return
		}
	}
}

// TestMetadataMemoryBounded: peers that announce large metadata and send
// all of it but one piece make each exchange hold nearly the whole size.
// Without a bound, Concurrency x PeersPerHash such exchanges held that
// much each (4 GiB at the defaults). With MetadataMemory for one and a
// half of them, two concurrent exchanges cannot both hold theirs: one
// fails as local_error (our limit: not listed against the peer), the
// other holds its pieces until it ends, and gives them all back then.
// The run warns of the limit once, a line saying what to change: its
// local_error results blame no hash, and nothing else said why nothing
// was fetched.
func TestMetadataMemoryBounded(t *testing.T) {
	const size = 1 << 20
	o := testOptions()
	var logs syncBuffer
	o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	o.MaxMetadataSize, o.MetadataMemory = size, size+size/2
	// The first exchange must still hold its pieces when the second
	// reserves: it ends only when the test abandons it, once the second
	// is done (a 1 s, then 5 s, peer timeout let a slow machine free the
	// first's pieces before the second reserved anything).
	o.Timeout, o.PeerTimeout = backstop, backstop
	f := newFetcher(t, o)
	first, abandon := context.WithCancel(context.Background())
	defer abandon()
	var kept bool
	var wg sync.WaitGroup
	addr := startHoarder(t, size)
	wg.Go(func() { _, kept = f.Fetch(first, schema.Job{InfoHash: schema.Hash{1}, Peers: []string{addr}}) })
	// The second starts once the first holds all it will (every piece
	// but the last); the backstop only ends a hang (15 s here could end
	// a slow exchange on a loaded machine).
	for deadline := time.Now().Add(backstop); f.mem.used.Load() < size-metadataPieceSize; {
		if time.Now().After(deadline) {
			t.Fatalf("the first exchange holds %d bytes after %v, want %d", f.mem.used.Load(), backstop, size-metadataPieceSize)
		}
		time.Sleep(5 * time.Millisecond)
	}
	r, _ := f.Fetch(context.Background(), schema.Job{InfoHash: schema.Hash{2}, Peers: []string{startHoarder(t, size)}})
	if r.Outcome != schema.OutcomeLocalError || len(r.PeerFailures) != 0 {
		t.Errorf("second exchange: %s with peer failures %+v; want local_error (the memory limit), none listed", r.Outcome, r.PeerFailures)
	}
	if used := f.mem.used.Load(); used < size-metadataPieceSize {
		t.Errorf("the first exchange holds %d bytes after the second, want %d", used, size-metadataPieceSize)
	}
	abandon()
	wg.Wait()
	if kept {
		t.Error("the abandoned first exchange has a result")
	}
	if used := f.mem.used.Load(); used != 0 {
		t.Fatalf("%d bytes still reserved after the exchanges ended", used)
	}
	if n := strings.Count(logs.String(), "--metadata-memory reached"); n != 1 {
		t.Fatalf("%d warnings of the memory limit, want 1:\n%s", n, logs.String())
	}
}
