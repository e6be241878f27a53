// The column reader's pages of a peer_port column (see peers.go): an
// INT32's values as they are, an INT64's by value.

package dedup

import (
	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/rowio"
)

// portPageFor is the page reader of a peer_port column of physical kind
// k: portPage for an INT32, portPage64 for an INT64 (unsigned: a
// UBIGINT's).
func (r *rgBuf) portPageFor(k parquet.Kind, unsigned bool) func(parquet.Page) (func(row, v, n int), error) {
	if k != parquet.Int64 {
		return r.portPage
	}
	return func(p parquet.Page) (func(row, v, n int), error) { return r.portPage64(p, unsigned) }
}

// portPage reads a peer_port column (INT32 but a UINTEGER: fastLayout
// leaves those to the row reader; null for all but announce_peer rows)
// into r.port.
func (r *rgBuf) portPage(p parquet.Page) (func(row, v, n int), error) {
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
		}, nil
	}
	vals := dataOf(p).Int32()
	if err := checkCount(p, len(vals)); err != nil {
		return nil, err
	}
	return func(row, v, n int) { copy(r.port[row:row+n], vals[v:v+n]) }, nil
}

// portPage64 reads a page of an INT64 peer_port column (a UBIGINT's when
// unsigned) into r.port by value: a value past int32 is bad input, the
// IntRangeError of its value in the page (colReader places it), as the
// row reader's rowio.IntCheck and the Arrow readers refuse it.
func (r *rgBuf) portPage64(p parquet.Page, unsigned bool) (func(row, v, n int), error) {
	past := func(v int, x int64) error {
		if x != int64(int32(x)) || unsigned && x < 0 {
			return rowio.Int64Past("peer_port", int64(v), x, unsigned, false)
		}
		return nil
	}
	if d := p.Dictionary(); d != nil {
		dict := dataOf(d.Page()).Int64()
		idx, err := dictIndexes(p, len(dict))
		if err != nil {
			return nil, err
		}
		for v, ix := range idx {
			if err := past(v, dict[ix]); err != nil {
				return nil, err
			}
		}
		return func(row, v, n int) {
			for i, ix := range idx[v : v+n] {
				r.port[row+i] = int32(dict[ix])
			}
		}, nil
	}
	vals := dataOf(p).Int64()
	if err := checkCount(p, len(vals)); err != nil {
		return nil, err
	}
	for v, x := range vals {
		if err := past(v, x); err != nil {
			return nil, err
		}
	}
	return func(row, v, n int) {
		for i, x := range vals[v : v+n] {
			r.port[row+i] = int32(x)
		}
	}, nil
}
