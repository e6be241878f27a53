package capture

import (
	"bytes"
	"math/rand/v2"
	"net"
	"net/netip"
	"slices"
	"testing"

	"github.com/anacrolix/dht/v2/krpc"
)

// TestClosestMatchesBruteForce: on routing tables of random IDs, the
// window around the target's position in ID order holds the XOR-closest
// nodes.
func TestClosestMatchesBruteForce(t *testing.T) {
	for _, size := range []int{0, 1, 5, 8, 40, 1000} {
		rng := rand.New(rand.NewPCG(uint64(size), 9))
		var nis []krpc.NodeInfo
		for i := range size {
			var id krpc.ID
			for j := range id {
				id[j] = byte(rng.Uint32())
			}
			nis = append(nis, krpc.NodeInfo{ID: id, Addr: krpc.NodeAddr{IP: net.IPv4(10, 0, byte(i>>8), byte(i)), Port: 1000 + i}})
		}
		tb := newTable(nis)
		for range 200 {
			var target [20]byte
			for j := range target {
				target[j] = byte(rng.Uint32())
			}
			got := tb.appendClosest(nil, target[:], 8)
			ids := slices.Clone(tb.ids)
			slices.SortFunc(ids, func(a, b [20]byte) int { return xorCmp(a[:], b[:], target[:]) })
			var want []byte
			for _, id := range ids[:min(8, len(ids))] {
				want = append(want, id[:]...)
			}
			var gotIDs []byte
			for i := 0; i+26 <= len(got); i += 26 {
				gotIDs = append(gotIDs, got[i:i+20]...)
			}
			if !bytes.Equal(gotIDs, want) {
				t.Fatalf("size %d target %x: window answer differs from brute force", size, target)
			}
		}
	}
}

func TestParseCompactSkipsUnusable(t *testing.T) {
	good := contact{ID: [20]byte{1}, Addr: mustAddrPort("10.1.2.3:6881")}
	c := good.compact()
	zeroPort := good
	zeroPort.Addr = mustAddrPort("10.1.2.3:0")
	z := zeroPort.compact()
	var got []contact
	parseCompact(append(append(c[:], z[:]...), 1, 2, 3), func(ct contact) { got = append(got, ct) })
	if len(got) != 1 || got[0] != good {
		t.Fatalf("got %+v", got)
	}
}

func mustAddrPort(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }
