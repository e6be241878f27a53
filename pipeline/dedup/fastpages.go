// The fast path's page readers: each checks a page of one column and
// returns what copies its values into the rows being decoded.

package dedup

import (
	"errors"
	"slices"
	"unsafe"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/textenc"
)

// hashPage reads a page of a FIXED_LEN_BYTE_ARRAY(20) info_hash, PLAIN or
// dictionary-encoded. A dictionary-encoded page's values are its INT32
// indexes: only its dictionary holds the hashes (asking the page for
// them panicked, so every such file was "corrupt Parquet" to this reader).
func (r *rgBuf) hashPage(p parquet.Page) (func(row, v, n int), error) {
	if d := p.Dictionary(); d != nil {
		dict, size := dataOf(d.Page()).FixedLenByteArray()
		if size != 20 {
			return nil, errors.New("unexpected page layout")
		}
		idx, err := dictIndexes(p, len(dict)/20)
		if err != nil {
			return nil, err
		}
		return func(row, v, n int) {
			for i, ix := range idx[v : v+n] {
				copy(r.hashes[row+i][:], dict[int(ix)*20:])
			}
		}, nil
	}
	data, size := dataOf(p).FixedLenByteArray()
	if size != 20 {
		return nil, errors.New("unexpected page layout")
	}
	if err := checkCount(p, len(data)/20); err != nil {
		return nil, err
	}
	return func(row, v, n int) {
		// One copy of the run: a copy a hash called memmove each
		// (2% of a 10M-row first import's CPU).
		if dst := r.hashes[row : row+n]; n > 0 {
			copy(unsafe.Slice(&dst[0][0], n*20), data[v*20:(v+n)*20])
		}
	}, nil
}

// atPage reads observed_at in units of 1/div ms (int96Time: an INT96).
func (r *rgBuf) atPage(p parquet.Page, div int64) (func(row, v, n int), error) {
	if div == int96Time {
		return r.int96Page(p)
	}
	if d := p.Dictionary(); d != nil {
		dict := dataOf(d.Page()).Int64()
		idx, err := dictIndexes(p, len(dict))
		if err != nil {
			return nil, err
		}
		return func(row, v, n int) {
			for i, ix := range idx[v : v+n] {
				r.at[row+i] = dict[ix] / div
			}
		}, nil
	}
	vals := dataOf(p).Int64()
	if err := checkCount(p, len(vals)); err != nil {
		return nil, err
	}
	if div != 1 {
		return func(row, v, n int) {
			for i, x := range vals[v : v+n] {
				r.at[row+i] = x / div
			}
		}, nil
	}
	return func(row, v, n int) { copy(r.at[row:row+n], vals[v:v+n]) }, nil
}

// sourceOf is an observation's source as the row readers take it: an
// empty one is an import.
func sourceOf(s []byte) string {
	if len(s) == 0 {
		return schema.SourceImport
	}
	return string(s)
}

// srcPage interns the source column's values, each distinct one checked
// once (batch.intern): a dictionary page's entries, or a plain page's
// values as they first appear. A source that is not one is bad input in
// the first row that holds it.
func (r *rgBuf) srcPage(p parquet.Page, b *batch) (func(row, v, n int), error) {
	if d := p.Dictionary(); d != nil {
		data, offs := dataOf(d.Page()).ByteArray()
		ids := make([]uint16, max(len(offs)-1, 0))
		idx, err := dictIndexes(p, len(ids))
		if err != nil {
			return nil, err
		}
		for j := range ids {
			if ids[j], err = b.intern(sourceOf(data[offs[j]:offs[j+1]])); err != nil {
				if k := slices.Index(idx, int32(j)); k >= 0 {
					return nil, &rowError{row: int64(k), msg: err.Error()}
				}
				// No row holds it: never read.
			}
		}
		return func(row, v, n int) {
			for i, ix := range idx[v : v+n] {
				r.src[row+i] = ids[ix]
			}
		}, nil
	}
	data, offs := dataOf(p).ByteArray()
	if err := checkCount(p, max(len(offs)-1, 0)); err != nil {
		return nil, err
	}
	// Interned here rather than as rows are filled, which cannot fail.
	ids := resize(r.srcIDs, max(len(offs)-1, 0))
	r.srcIDs = ids
	for k := range ids {
		s := data[offs[k]:offs[k+1]]
		id, ok := b.srcID[string(s)]
		if !ok {
			var err error
			if id, err = b.intern(sourceOf(s)); err != nil {
				return nil, &rowError{row: int64(k), msg: err.Error()}
			}
		}
		ids[k] = id
	}
	return func(row, v, n int) { copy(r.src[row:row+n], ids[v:v+n]) }, nil
}

// typeOf is a hash_type value as dedup holds it: one beyond int8 becomes
// badType (which checkObs refuses), not the int8 it would wrap to (257
// read as 1).
func typeOf[T int32 | int64](x T) int8 {
	if x < -127 || x > 127 {
		return badType
	}
	return int8(x)
}

// typPageFor is the page reader of a hash_type column of INT32 values,
// read as unsigned ones when the column's type says so (see
// rowio.UnsignedInt): a UINTEGER's 2^32-1 is out of range, not the -1
// its bits make as an int32. Chosen per column, so each page's loop
// converts without asking.
func (r *rgBuf) typPageFor(unsigned bool) func(parquet.Page) (func(row, v, n int), error) {
	if unsigned {
		return func(p parquet.Page) (func(row, v, n int), error) { return typPage[uint32](r, p) }
	}
	return func(p parquet.Page) (func(row, v, n int), error) { return typPage[int32](r, p) }
}

// typPage reads a page of hash_type values, each as a T.
func typPage[T int32 | uint32](r *rgBuf, p parquet.Page) (func(row, v, n int), error) {
	if d := p.Dictionary(); d != nil {
		dict := dataOf(d.Page()).Int32()
		idx, err := dictIndexes(p, len(dict))
		if err != nil {
			return nil, err
		}
		return func(row, v, n int) {
			for i, ix := range idx[v : v+n] {
				r.typ[row+i] = typeOf(int64(T(dict[ix])))
			}
		}, nil
	}
	vals := dataOf(p).Int32()
	if err := checkCount(p, len(vals)); err != nil {
		return nil, err
	}
	return func(row, v, n int) {
		for i, x := range vals[v : v+n] {
			r.typ[row+i] = typeOf(int64(T(x)))
		}
	}, nil
}

// v2Page reads an info_hash_v2 column of bytes: 32 of a v2 hash, or none
// (null, as in infohash's own files), by textenc.V2BytesError. Another
// length is bad input in its row.
func (r *rgBuf) v2Page(p parquet.Page) (func(row, v, n int), error) {
	data, offs, idx, err := byteArrays(p) // DuckDB dictionary-encodes the column (mostly nulls)
	if err != nil {
		return nil, err
	}
	values := len(idx)
	if idx == nil {
		values = max(len(offs)-1, 0)
	}
	for k := range values {
		j := k
		if idx != nil {
			j = int(idx[k])
		}
		if msg := textenc.V2BytesError("info_hash_v2", int(offs[j+1]-offs[j])); msg != "" {
			return nil, &rowError{row: int64(k), msg: msg}
		}
	}
	return func(row, v, n int) {
		for i := range n {
			k := v + i
			if idx != nil {
				k = int(idx[k])
			}
			if offs[k+1]-offs[k] == 32 {
				r.putV2(row+i, data[offs[k]:offs[k+1]])
			}
		}
	}, nil
}

// byteArrays returns the values of a BYTE_ARRAY page (data, and offs
// bounding each), or those of its dictionary and the page's indexes into
// them (idx, nil for a plain page), checked against the page's count.
func byteArrays(p parquet.Page) (data []byte, offs []uint32, idx []int32, err error) {
	if d := p.Dictionary(); d != nil {
		data, offs = dataOf(d.Page()).ByteArray()
		idx, err = dictIndexes(p, max(len(offs)-1, 0))
		return data, offs, idx, err
	}
	data, offs = dataOf(p).ByteArray()
	return data, offs, nil, checkCount(p, max(len(offs)-1, 0))
}

// hashBytesPage reads an info_hash column of BYTE_ARRAY values (DuckDB's
// BLOB): each is a v1 hash (20 bytes) or a v2 one (32 bytes, keyed by its
// first 20 as the DHT does, and kept whole), as textenc.HashValue reads
// one. The column holds bytes (its layout says so, once per chunk): each
// value's length is checked by the rule's part for bytes alone
// (textenc.HashBytesError), without HashValue's copy and kind test per
// value (5% of dedup's CPU time on a 10M-row DuckDB BLOB file). A value
// of another length is bad input in its row.
func (r *rgBuf) hashBytesPage(p parquet.Page) (func(row, v, n int), error) {
	data, offs, idx, err := byteArrays(p)
	if err != nil {
		return nil, err
	}
	for j := 0; j+1 < len(offs); j++ {
		if msg := textenc.HashBytesError("info_hash", int(offs[j+1]-offs[j]), true); msg != "" {
			row := j // the page's first row with it (a value, or an entry of its dictionary)
			for k, ix := range idx {
				if int(ix) == j {
					row = k
					break
				}
			}
			return nil, &rowError{row: int64(row), msg: msg}
		}
	}
	if idx != nil {
		return func(row, v, n int) {
			for i, ix := range idx[v : v+n] {
				r.putHash(row+i, data[offs[ix]:offs[ix+1]])
			}
		}, nil
	}
	return func(row, v, n int) {
		for i := range n {
			if offs[v+i+1]-offs[v+i] == 20 { // the usual case, without put's checks
				copy(r.hashes[row+i][:], data[offs[v+i]:])
				continue
			}
			r.putHash(row+i, data[offs[v+i]:offs[v+i+1]])
		}
	}, nil
}

// hashTextPage reads an info_hash column of text (DuckDB's VARCHAR) of
// type typ: hex v1 or v2 hashes (each value read by textenc.HashValue),
// put as hashBytesPage puts bytes.
func (r *rgBuf) hashTextPage(typ string) func(parquet.Page) (func(row, v, n int), error) {
	return func(p parquet.Page) (func(row, v, n int), error) {
		hs, err := textPage(p, hashHexDecoder(typ))
		if err != nil {
			return nil, err
		}
		return func(row, v, n int) {
			for i, h := range hs[v : v+n] {
				r.putHash(row+i, h)
			}
		}, nil
	}
}

// v2TextPage reads an info_hash_v2 column of text of type typ: hex v2
// hashes, or empty (null, as in infohash's own files).
func (r *rgBuf) v2TextPage(typ string) func(parquet.Page) (func(row, v, n int), error) {
	return func(p parquet.Page) (func(row, v, n int), error) {
		hs, err := textPage(p, v2HexDecoder(typ))
		if err != nil {
			return nil, err
		}
		return func(row, v, n int) {
			for i, h := range hs[v : v+n] {
				if len(h) == 32 {
					r.putV2(row+i, h)
				}
			}
		}, nil
	}
}
