package capture

import (
	"encoding/binary"
	"fmt"
	"net"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/infohash/infohash/formats/krpc"
)

// TestSocketDropsAreCounted: the packets the kernel drops while a node's
// receive buffer is full (its read loop behind) are counted in
// socket_dropped; they were lost without a trace, packets_in counting
// only those read. The drops so far reach the node with the next packet
// queued after them.
func TestSocketDropsAreCounted(t *testing.T) {
	n := fuzzNode(t)
	if err := n.sock.SetReadBuffer(4096); err != nil {
		t.Fatal(err)
	}
	countDrops(n.sock)
	c, err := net.DialUDP("udp4", nil, n.sock.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	stopped := make(chan struct{})
	close(stopped) // serve reads until the socket is quiet, then returns
	const burst = 500
	for _, sends := range []int{burst, 1} { // a burst into the small buffer, then one packet after the drops
		for i := range sends {
			if _, err := c.Write(krpc.AppendPing(nil, []byte(fmt.Sprint(i)), peerID)); err != nil {
				t.Fatal(err)
			}
		}
		n.serve(stopped)
	}
	st := n.r.c.stats()
	if st.SocketDropped == 0 || st.PacketsIn+st.SocketDropped != burst+1 {
		t.Fatalf("packets_in %d + socket_dropped %d, want %d with some dropped", st.PacketsIn, st.SocketDropped, burst+1)
	}
}

// TestDropsIn: the drop count in control messages, among others or cut.
func TestDropsIn(t *testing.T) {
	msg := func(level, typ int32, data []byte) []byte {
		b := make([]byte, unix.CmsgSpace(len(data)))
		h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
		h.Level, h.Type = level, typ
		h.SetLen(unix.CmsgLen(len(data)))
		copy(b[unix.CmsgLen(0):], data)
		return b
	}
	seven := binary.NativeEndian.AppendUint32(nil, 7)
	drops := msg(unix.SOL_SOCKET, unix.SO_RXQ_OVFL, seven)
	other := msg(unix.SOL_SOCKET, unix.SO_TIMESTAMP, make([]byte, 16))
	for _, tt := range []struct {
		name string
		oob  []byte
		want uint32
		ok   bool
	}{
		{"none", nil, 0, false},
		{"the drops", drops, 7, true},
		{"after another message", append(append([]byte{}, other...), drops...), 7, true},
		{"another message only", other, 0, false},
		{"cut short", drops[:unix.CmsgLen(0)+2], 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got, ok := dropsIn(tt.oob); got != tt.want || ok != tt.ok {
				t.Fatalf("dropsIn = %d, %v; want %d, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}
