package statecol

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// ReadHashes appends the info_hash column of the state file df (its
// footer checked first, see Open) to out, read page by page: no row is
// assembled and no other column decoded. A state file is sorted by
// info_hash, so what it appends is too.
func ReadHashes(df rowio.DataFile, out []schema.Hash) ([]schema.Hash, error) {
	f, err := Open(df)
	if err != nil {
		return out, err
	}
	defer f.Close()
	return f.AppendHashes(out)
}

// AppendHashes appends f's info_hash column to out (see ReadHashes).
// An error names the file.
func (f *File) AppendHashes(out []schema.Hash) (_ []schema.Hash, err error) {
	path := f.f.Name()
	defer recoverCorrupt(&err, path)
	for i, rg := range f.RowGroups() {
		c, _ := f.Column(rg, "info_hash")
		if c == nil {
			return out, fmt.Errorf("%s: no info_hash column", path)
		}
		n := int(rg.NumRows())
		start := len(out)
		out = slices.Grow(out, n)[:start+n]
		if n == 0 {
			continue
		}
		buf := unsafe.Slice((*byte)(unsafe.Pointer(&out[start])), n*len(schema.Hash{}))
		if f.readPlainHashes(i, buf) {
			continue
		}
		if err := Fixed(c, len(schema.Hash{}), buf); err != nil {
			return out[:start], fmt.Errorf("%s: info_hash: %w", path, err)
		}
	}
	return out, nil
}

// maxHashHeader bounds the page header readPlainHashes reads (our
// writer's take ~30 bytes).
const maxHashHeader = 256

// readPlainHashes reads row group i's info_hash chunk straight into out
// (20 bytes a row) when it is what infohash's writer makes: one
// uncompressed PLAIN data page, whose header it decodes and whose CRC it
// checks. It reports false, out then holding anything, for any other
// chunk and for one that fails a check: the page reader then reads it
// (and reports the damage as it always did). Through the page reader the
// values were copied twice after the read (into the page's values, then
// into out), 1.5 MB a partition of a 20M-hash state.
func (f *File) readPlainHashes(i int, out []byte) bool {
	rows := int64(len(out) / len(schema.Hash{}))
	m, ok := f.ownChunk(i, "info_hash", format.FixedLenByteArray, rows)
	if !ok {
		return false
	}
	hdrLen := m.TotalCompressedSize - int64(len(out))
	if hdrLen <= 0 || hdrLen > maxHashHeader {
		return false
	}
	var hb [maxHashHeader]byte
	if _, err := f.r.ReadAt(hb[:hdrLen], m.DataPageOffset); err != nil {
		return false
	}
	var h format.PageHeader
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), hb[:hdrLen], &h); err != nil {
		return false
	}
	if !ownPage(&h, format.Plain, rows, len(out)) {
		return false
	}
	if _, err := f.r.ReadAt(out, m.DataPageOffset+hdrLen); err != nil {
		return false
	}
	return crcHolds(&h, out)
}
