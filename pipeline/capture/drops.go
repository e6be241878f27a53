package capture

import (
	"encoding/binary"
	"net"

	"golang.org/x/sys/unix"
)

// The packets a node never read: when its read loop falls behind (a flood,
// or a writer that makes it wait), the kernel drops what no longer fits
// its socket's receive buffer, and nothing counted them: an overloaded run
// looked like a quiet one, its lost observations nowhere. With
// SO_RXQ_OVFL the kernel stamps each packet read with the socket's drops
// so far; the read loop adds the increase to socket_dropped. Drops after
// the last packet read are not seen.

// countDrops asks the kernel for the drop count on sock's packets (a
// failure only leaves socket_dropped at 0).
func countDrops(sock *net.UDPConn) {
	rc, err := sock.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		_ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RXQ_OVFL, 1)
	})
}

// oobSpace is room for the SO_RXQ_OVFL message (and one more).
var oobSpace = 2 * unix.CmsgSpace(4)

// dropsIn returns the drop count of the control messages oob, if any.
func dropsIn(oob []byte) (uint32, bool) {
	hdr := unix.CmsgLen(0)
	for len(oob) >= hdr {
		var l uint64
		if unix.SizeofCmsghdr == 16 {
			l = binary.NativeEndian.Uint64(oob)
		} else {
			l = uint64(binary.NativeEndian.Uint32(oob))
		}
		off := unix.SizeofCmsghdr - 8 // level and type follow the length
		level := int32(binary.NativeEndian.Uint32(oob[off:]))
		typ := int32(binary.NativeEndian.Uint32(oob[off+4:]))
		if l < uint64(hdr) || l > uint64(len(oob)) {
			return 0, false
		}
		if level == unix.SOL_SOCKET && typ == unix.SO_RXQ_OVFL && l >= uint64(hdr+4) {
			return binary.NativeEndian.Uint32(oob[hdr:]), true
		}
		next := unix.CmsgSpace(int(l) - hdr)
		if next > len(oob) {
			break
		}
		oob = oob[next:]
	}
	return 0, false
}
