package fetch

import (
	"context"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/tools/badpeers"
)

// TestMemoryShare: the share of the metadata memory one remote address
// may hold is the larger of twice the metadata cap and an eighth of the
// budget, and none when that would be the whole budget.
func TestMemoryShare(t *testing.T) {
	for _, tt := range []struct {
		name                 string
		memory, maxMeta      int64
		wantLimit, wantShare int64
	}{
		{"defaults: an eighth", DefaultMetadataMemory, DefaultMaxMetadataSize, DefaultMetadataMemory, 32 << 20},
		{"a large cap: twice it", 256 << 20, 64 << 20, 256 << 20, 128 << 20},
		{"a budget under twice the cap: none", 15 << 20, 10 << 20, 15 << 20, 0},
		{"a budget of twice the cap: none", 20 << 20, 10 << 20, 20 << 20, 0},
		{"a budget under the cap: raised to it, none", 1 << 20, 10 << 20, 10 << 20, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := newMemBudget(tt.memory, tt.maxMeta)
			if m.limit != tt.wantLimit || m.share != tt.wantShare {
				t.Fatalf("limit %d, share %d; want %d, %d", m.limit, m.share, tt.wantLimit, tt.wantShare)
			}
		})
	}
}

// TestOneAddressCannotStarveOthers: one hostile address, on the
// maxPortsPerIP ports an attempt may dial, each announcing the metadata
// cap, sending all of it but a piece and stalling until --peer-timeout,
// in as many concurrent jobs, holds at most its share of
// --metadata-memory, and an honest peer on another address is served
// meanwhile. The budget is what the eight hoarders hold together: with
// no share they held all of it, and the honest exchange ended
// local_error. A hoarder refused for its address's share fails its job
// as rejected, a peer-level class, listed against that endpoint (merge
// penalises it; the hash is retried soon).
func TestOneAddressCannotStarveOthers(t *testing.T) {
	const size = 1 << 20
	const held = size - metadataPieceSize // what one hoarder's exchange holds
	o := testOptions()
	o.MaxMetadataSize, o.MetadataMemory = size, maxPortsPerIP*held
	// The hoarders hold until the test abandons them (see
	// TestMetadataMemoryBounded).
	o.Timeout, o.PeerTimeout = backstop, backstop
	f := newFetcher(t, o)
	if f.mem.share != 2*size {
		t.Fatalf("share %d, want %d (twice the cap)", f.mem.share, 2*size)
	}
	hostile := netip.MustParseAddr("127.0.0.9")
	hold, abandon := context.WithCancel(context.Background())
	defer abandon()
	type ended struct {
		addr string
		r    schema.Result
		kept bool
	}
	results := make(chan ended, maxPortsPerIP)
	var wg sync.WaitGroup
	for i := range maxPortsPerIP {
		addr := startHoarderOn(t, hostile.String(), size)
		wg.Go(func() {
			r, kept := f.Fetch(hold, schema.Job{InfoHash: schema.Hash{0x40, byte(i)}, Peers: []string{addr}})
			results <- ended{addr, r, kept}
		})
	}
	// Every hoarder's exchange either ended or holds all it will: an
	// exchange holds at most held, so the bytes held reach held for each
	// job still running only then.
	var refused []ended
	for deadline := time.Now().Add(backstop); ; {
		for len(results) > 0 {
			refused = append(refused, <-results)
		}
		if f.mem.used.Load() == int64(maxPortsPerIP-len(refused))*held {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v, %d bytes held with %d of %d hoarders' jobs ended", backstop, f.mem.used.Load(), len(refused), maxPortsPerIP)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := f.mem.held(hostile); got > f.mem.share || f.mem.used.Load() > f.mem.share {
		t.Errorf("%s holds %d bytes (%d in all), over its share %d", hostile, got, f.mem.used.Load(), f.mem.share)
	}
	honest := badpeers.NewTorrent(0x41, 2, 10)
	good := startPeer(t, badpeers.Good, honest)
	job := schema.Job{InfoHash: honest.InfoHash, Peers: []string{good.Addr()}}
	r, ok := f.Fetch(context.Background(), job)
	if !ok || r.Outcome != schema.OutcomeOK {
		t.Errorf("honest peer: %s (%s), want ok", r.Outcome, r.Detail)
	}
	checkResult(t, job, r)
	for _, e := range refused {
		if !e.kept || e.r.Outcome != schema.OutcomeRejected || len(e.r.PeerFailures) != 1 ||
			e.r.PeerFailures[0].Addr != e.addr || e.r.PeerFailures[0].Class != schema.OutcomeRejected {
			t.Errorf("hoarder %s refused its share: %s (%s), peer failures %+v; want rejected, listed against it",
				e.addr, e.r.Outcome, e.r.Detail, e.r.PeerFailures)
		}
	}
	abandon()
	wg.Wait()
	if used := f.mem.used.Load(); used != 0 || f.mem.held(hostile) != 0 {
		t.Fatalf("%d bytes still reserved (%d by %s) after the exchanges ended", used, f.mem.held(hostile), hostile)
	}
}
