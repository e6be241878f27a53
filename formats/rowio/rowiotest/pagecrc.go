// Package rowiotest helps the fuzz targets of Parquet readers reach past
// the page CRCs: parquet-go writes a CRC-32 on every page and checks it
// before it decodes the page, so a mutated page stops there and never
// reaches the decoders (levels, dictionaries, values, row assembly).
// FixPageCRCs and ClearPageCRCs patch a mutated file's page headers in
// place, so that the same bytes can also be read past that check.
package rowiotest

import (
	"encoding/binary"
	"hash/crc32"
)

// FixPageCRCs returns a copy of the Parquet file b in which every page
// whose header carries a non-zero CRC that does not match the page's data
// carries the matching one, and the number of pages it patched (0: b
// needs none, and the copy equals b). It finds the pages as readers do:
// the column chunks the footer lists, and in each the page headers one
// after another, each followed by as many bytes as its
// compressed_page_size says.
//
// The CRC is patched in place, within the bytes its varint takes, so
// that no offset moves: a varint may carry padding (a byte 0x80 adds
// nothing), which Thrift's decoders accept. A CRC that would need more
// bytes than the old one took (about 1 page in 16 has a CRC of 4 bytes or
// fewer, and most new CRCs take 5) is set to 0 instead, which means "no
// CRC": readers skip the check.
//
// Anything it cannot walk (no footer, a footer or page header it cannot
// parse, a page past its chunk) it leaves as it is: such a file fails in
// the reader anyway.
func FixPageCRCs(b []byte) ([]byte, int) { return patchCRCs(b, false) }

// ClearPageCRCs is FixPageCRCs setting every mismatched CRC to 0 ("no
// CRC") instead: the mutated page is read as a page without a CRC, as a
// file from another writer may have. infohash's own readers of trusted
// files skip some checks of a page whose CRC is set (rowio.OpenOwnParquet),
// which a fixed CRC would make them skip on crafted pages: a fuzz target
// of such a reader uses this one.
func ClearPageCRCs(b []byte) ([]byte, int) { return patchCRCs(b, true) }

// patchCRCs is FixPageCRCs, or with zero ClearPageCRCs.
func patchCRCs(b []byte, zero bool) ([]byte, int) {
	out := append([]byte(nil), b...)
	if len(b) < 12 || string(b[len(b)-4:]) != "PAR1" {
		return out, 0
	}
	n := int64(binary.LittleEndian.Uint32(b[len(b)-8:]))
	end := int64(len(b)) - 8 // of the footer
	if n > end-4 {
		return out, 0
	}
	chunks, err := columnChunks(b[end-n : end])
	if err != nil {
		return out, 0
	}
	patched := 0
	for _, c := range chunks {
		start := c.data
		if c.dict != 0 {
			start = c.dict
		}
		if start < 4 || c.size < 0 || start > end-n || c.size > end-n-start {
			continue
		}
		patched += patchChunk(out[:start+c.size], start, zero)
	}
	return out, patched
}

// patchChunk patches the pages of the column chunk from start to the end
// of b (setting their CRCs to 0 with zero) and returns how many it
// patched.
func patchChunk(b []byte, start int64, zero bool) int {
	patched := 0
	for pos := start; pos < int64(len(b)); {
		h, err := pageHeader(b[pos:])
		if err != nil || h.size < 0 || int64(h.size) > int64(len(b))-pos-int64(h.headerLen) {
			return patched
		}
		data := b[pos+int64(h.headerLen) : pos+int64(h.headerLen)+int64(h.size)]
		if h.crcLen > 0 && h.crc != 0 {
			want := int32(crc32.ChecksumIEEE(data))
			if want != h.crc {
				v := want
				if zero || varintLen(zigzag(want)) > h.crcLen {
					v = 0
				}
				putPadded(b[pos+int64(h.crcAt):pos+int64(h.crcAt+h.crcLen)], zigzag(v))
				patched++
			}
		}
		pos += int64(h.headerLen) + int64(h.size)
	}
	return patched
}

// chunk is where a column chunk lies, as its ColumnMetaData says.
type chunk struct {
	data, dict, size int64 // data_page_offset, dictionary_page_offset, total_compressed_size
}

// Field ids of the Parquet metadata structs walked here (parquet.thrift).
const (
	fileRowGroups        = 4  // FileMetaData.row_groups
	rowGroupColumns      = 1  // RowGroup.columns
	columnChunkMeta      = 3  // ColumnChunk.meta_data
	metaTotalCompressed  = 7  // ColumnMetaData.total_compressed_size
	metaDataPageOffset   = 9  // ColumnMetaData.data_page_offset
	metaDictionaryOffset = 11 // ColumnMetaData.dictionary_page_offset
	pageCompressedSize   = 3  // PageHeader.compressed_page_size
	pageCRC              = 4  // PageHeader.crc
)

// columnChunks walks the FileMetaData in footer and returns its column
// chunks, row group after row group.
func columnChunks(footer []byte) ([]chunk, error) {
	w := &walker{b: footer}
	var out []chunk
	meta := func(id int, typ byte) (bool, error) {
		if typ != tI64 {
			return false, nil
		}
		c := &out[len(out)-1]
		switch id {
		case metaTotalCompressed:
			return true, w.i64(&c.size)
		case metaDataPageOffset:
			return true, w.i64(&c.data)
		case metaDictionaryOffset:
			return true, w.i64(&c.dict)
		}
		return false, nil
	}
	column := func(id int, typ byte) (bool, error) {
		if id != columnChunkMeta || typ != tStruct {
			return false, nil
		}
		out = append(out, chunk{})
		return true, w.structure(3, meta)
	}
	rowGroup := func(id int, typ byte) (bool, error) {
		if id != rowGroupColumns || typ != tList {
			return false, nil
		}
		return true, w.structs(2, column)
	}
	err := w.structure(0, func(id int, typ byte) (bool, error) {
		if id != fileRowGroups || typ != tList {
			return false, nil
		}
		return true, w.structs(1, rowGroup)
	})
	return out, err
}

// header is what patchChunk needs of a page header.
type header struct {
	headerLen int   // bytes of the header
	size      int32 // compressed_page_size
	crc       int32
	crcAt     int // offset of the CRC's varint in the header
	crcLen    int // its bytes; 0 if the header has no CRC
}

// pageHeader walks the PageHeader at the start of b. Like a decoder, it
// keeps the last value of a field given twice.
func pageHeader(b []byte) (header, error) {
	w := &walker{b: b}
	var h header
	err := w.structure(0, func(id int, typ byte) (bool, error) {
		if typ != tI32 {
			return false, nil
		}
		switch id {
		case pageCompressedSize:
			return true, w.i32(&h.size)
		case pageCRC:
			h.crcAt = w.off
			err := w.i32(&h.crc)
			h.crcLen = w.off - h.crcAt
			return true, err
		}
		return false, nil
	})
	h.headerLen = w.off
	return h, err
}

// zigzag is how Thrift's compact protocol maps an i32 to a varint.
func zigzag(v int32) uint32 { return uint32(v<<1) ^ uint32(v>>31) }

func varintLen(v uint32) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

// putPadded writes v as a varint of exactly len(b) bytes (at least
// varintLen(v)), padding it with continuation bytes that add nothing.
func putPadded(b []byte, v uint32) {
	for i := range b {
		c := byte(v & 0x7f)
		v >>= 7
		if i < len(b)-1 {
			c |= 0x80
		}
		b[i] = c
	}
}
