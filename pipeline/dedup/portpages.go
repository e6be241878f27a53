// The column reader's pages of a peer_port column (see peers.go): an
// INT32's values as they are, an INT64's, a UINTEGER's or a UBIGINT's by
// value; a value that is no port is dropped and counted (badports.go).

package dedup

import (
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/infohash/infohash/formats/rowio"
)

// portPageFor is the page reader of a peer_port column of physical kind
// k, read by value when unsigned (fastColumns.portUnsigned): portPage for
// an INT32 (of any narrower integer type too: TINYINT to USMALLINT, whose
// values an int32 holds), portPageOf for a UINTEGER, an INT64 or a
// UBIGINT, whose values may be past int32. A value that is no port under
// l (the column's portLimitOf) reads as 0, and counts as a bad port of b
// in an announce_peer row (dropBadPorts).
func (r *rgBuf) portPageFor(k parquet.Kind, unsigned bool, l portLimit, b *batch) func(parquet.Page) (func(row, v, n int), error) {
	switch {
	case k == parquet.Int64 && unsigned:
		return func(p parquet.Page) (func(row, v, n int), error) { return portPageOf(r, p, uint64Values, b) }
	case k == parquet.Int64:
		return func(p parquet.Page) (func(row, v, n int), error) { return portPageOf(r, p, int64Values, b) }
	case unsigned:
		return func(p parquet.Page) (func(row, v, n int), error) { return portPageOf(r, p, uint32Values, b) }
	}
	return func(p parquet.Page) (func(row, v, n int), error) { return r.portPage(p, l, b) }
}

// portUnsigned reports whether the values of port, a peer_port column,
// are read as unsigned ones: a UBIGINT's, or a UINTEGER's (parquet-go
// gives their bits: 2^32-1 as -1), not a USMALLINT's or a UTINYINT's,
// whose values an int32 holds as stored.
func portUnsigned(port *parquet.Column) bool {
	if !rowio.UnsignedInt(port.Type()) {
		return false
	}
	return port.Type().Kind() == parquet.Int64 || port.Type().LogicalType().Value.(*format.IntType).BitWidth >= 32
}

// portPage reads a page of a peer_port column of INT32 values that an
// int32 holds as they are (not a UINTEGER's; null for all but
// announce_peer rows) into r.port, those that are no port under l as 0.
func (r *rgBuf) portPage(p parquet.Page, l portLimit, b *batch) (func(row, v, n int), error) {
	if d := p.Dictionary(); d != nil {
		dict := dataOf(d.Page()).Int32()
		idx, err := dictIndexes(p, len(dict))
		if err != nil {
			return nil, err
		}
		return func(row, v, n int) {
			for i, ix := range idx[v : v+n] {
				r.port[row+i] = dict[ix]
			}
			r.dropBadPorts(r.port[row:row+n], row, l, b)
		}, nil
	}
	vals := dataOf(p).Int32()
	if err := checkCount(p, len(vals)); err != nil {
		return nil, err
	}
	return func(row, v, n int) {
		copy(r.port[row:row+n], vals[v:v+n])
		r.dropBadPorts(r.port[row:row+n], row, l, b)
	}, nil
}

// wideInt is the type of a peer_port value that an int32 may not hold: a
// UINTEGER's (uint32), an INT64's or a UBIGINT's (uint64).
type wideInt interface{ uint32 | int64 | uint64 }

func uint32Values(p parquet.Page) []uint32 { return dataOf(p).Uint32() }
func int64Values(p parquet.Page) []int64   { return dataOf(p).Int64() }
func uint64Values(p parquet.Page) []uint64 { return dataOf(p).Uint64() }

// portValue is x, a value of a peer_port column widened to an int64 (a
// uint64's past 2^63 wraps around to a negative one), as the int32 the
// readers keep: itself when it is a port (1 to 65535), else 0 (no port).
// A value past int32 (a UINTEGER's 2^32-1, an INT64's 2^40, a UBIGINT's
// 2^64-1) is no port as 70000 is, not the int32 of its low bits (-1, 0;
// 2^32+6881 would be 6881), nor bad input: only its row's endpoint is
// dropped, and counted.
func portValue(x int64) int32 {
	if x < 1 || x > 65535 {
		return 0
	}
	return int32(x)
}

// portPageOf reads a page of a peer_port column of T values (values
// gives a page's) into r.port by value (portValue): one that is no port,
// past int32 or not, reads as 0, a bad port of b in an announce_peer row
// (dropBadPorts).
func portPageOf[T wideInt](r *rgBuf, p parquet.Page, values func(parquet.Page) []T, b *batch) (func(row, v, n int), error) {
	if d := p.Dictionary(); d != nil {
		dict := values(d.Page())
		idx, err := dictIndexes(p, len(dict))
		if err != nil {
			return nil, err
		}
		return func(row, v, n int) {
			for i, ix := range idx[v : v+n] {
				r.port[row+i] = portValue(int64(dict[ix]))
			}
			r.dropBadPorts(r.port[row:row+n], row, anyPort, b)
		}, nil
	}
	vals := values(p)
	if err := checkCount(p, len(vals)); err != nil {
		return nil, err
	}
	return func(row, v, n int) {
		for i, x := range vals[v : v+n] {
			r.port[row+i] = portValue(int64(x))
		}
		r.dropBadPorts(r.port[row:row+n], row, anyPort, b)
	}, nil
}
