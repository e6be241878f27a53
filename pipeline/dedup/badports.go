// Bad announced ports: an announce_peer row whose peer_port is not null
// but names no port (0, negative, past 65535, or past the integer width
// its Parquet column declares: a UTINYINT's 300) names no endpoint. Every
// reader drops it the same way, counts it (Stats.BadPeerPorts) and warns
// once per input, so that an operator learns that a producer is broken.

package dedup

import (
	"log/slog"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// portLimit is the largest value of a peer_port column that is a port:
// 65535, or less for a column of a narrower declared width (a TINYINT's
// 127, a UTINYINT's 255, a SMALLINT's 32767). A value of such a column
// past its width is damaged or hand-written: bad input for that column,
// not a port to trust.
type portLimit int32

// anyPort is the limit of a column whose values are as wide as a port's
// or wider (INT32, INT64, UINTEGER, UBIGINT, USMALLINT), and of an Arrow
// one (whose type is its width).
const anyPort portLimit = 65535

// ok reports whether v is a port under l: 1 to l. One compare: 0 and
// negative values wrap around past l.
func (l portLimit) ok(v int32) bool { return uint32(v)-1 < uint32(l) }

// portLimitOf is the limit of a Parquet peer_port column of type t, from
// its logical type (parquet-go gives a writer's INT_8 to UINT_16
// converted type, from before logical types, as one).
func portLimitOf(t parquet.Type) portLimit {
	lt := t.LogicalType()
	if lt == nil {
		return anyPort
	}
	it, ok := lt.Value.(*format.IntType)
	if !ok || it.BitWidth >= 32 || it.BitWidth <= 0 {
		return anyPort
	}
	hi := int32(1)<<it.BitWidth - 1 // 255, 65535
	if it.IsSigned {
		hi = int32(1)<<(it.BitWidth-1) - 1 // 127, 32767
	}
	return min(anyPort, portLimit(hi))
}

// badPorts counts the bad announced ports of a batch (n) and of the input
// being read (inN; only the goroutine reading it counts), and notes each
// input's for the warning.
type badPorts struct {
	n, inN   int64
	notes    []badPortNote
	nullIn   int64        // the input's announce_peer rows whose peer_port is null (noport.go)
	unported []noPortNote // inputs with announce_peer rows without a port (noport.go)
}

// badPortNote is what one input had.
type badPortNote struct {
	input string
	n     int64
}

// bad counts one bad port of the input being read.
func (p *badPorts) bad() { p.inN++ }

// endInput closes the count of the input just read (named name).
func (p *badPorts) endInput(name string) {
	if p.inN > 0 {
		p.n += p.inN
		p.notes = append(p.notes, badPortNote{name, p.inN})
	}
	p.noPort(name, p.nullIn)
	p.inN, p.nullIn = 0, 0
}

// warn warns, once per input of the committed batch, about the
// announce_peer rows read without their endpoint for a bad port.
func (p *badPorts) warn() {
	for _, w := range p.notes {
		slog.Warn("dedup: announce_peer rows with a peer_port that is no port (want 1-65535, within the column's "+
			"integer type) were read without an endpoint: its producer is broken", "input", w.input, "bad_peer_ports", w.n)
	}
}

// dropBadPorts zeroes the values of ports, those of rows row onwards of
// the slice being decoded, that are no port under l (a zero names no
// endpoint: nodeAddrPage skips it, as a null), counting those of
// announce_peer rows (source is read before peer_port).
func (r *rgBuf) dropBadPorts(ports []int32, row int, l portLimit, b *batch) {
	for i, p := range ports {
		if !l.ok(p) {
			ports[i] = 0
			if r.src[row+i] == b.announce {
				b.ports.bad()
			}
		}
	}
}
