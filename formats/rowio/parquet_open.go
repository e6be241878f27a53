package rowio

import (
	"encoding/binary"
	"fmt"
	"io"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// NoColumns is a schema of no columns: OpenParquet(r, size, NoColumns,
// lim) checks a file's footer and scans no pages, for a caller that only
// looks at the metadata (or opens the file again to read its rows).
var NoColumns = parquet.NewSchema("none", parquet.Group{})

// OpenParquet opens an untrusted Parquet file of size bytes. Before
// parquet-go sees anything it checks the footer's encoding, the metadata
// against lim and the file size, and the page headers (with compression
// frames) of every column whose path is in read (all columns if nil), so
// that decoding those columns cannot allocate more than lim allows.
// Problems are CorruptErrors or wrap ErrLimit; panics become errors.
// parquet-go reads the LZ4_RAW chunks of those columns as rowio
// decompresses them (unpackLZ4): the file's metadata reads them as
// UNCOMPRESSED chunks after its data.
func OpenParquet(r io.ReaderAt, size int64, read *parquet.Schema, lim Limits) (*parquet.File, error) {
	pf, _, err := openParquetFile(r, size, read, lim, false, nil)
	return pf, err
}

// OpenOwnParquet is OpenParquet reading every column of a file infohash
// wrote itself (a dataset's state file), which may be damaged on disk but
// is not crafted. Every page header's sizes and value counts are checked,
// as OpenParquet checks them, but not the compression frames and levels
// of a page whose header carries a CRC (infohash writes one on every
// page): parquet-go verifies the CRC before it decodes anything of the
// page, which refuses a page damaged on disk. Those checks decompress
// every page with levels, which only a crafted file needs; the header
// checks cost one small read per page. A page without a CRC is checked
// in full.
func OpenOwnParquet(r io.ReaderAt, size int64, lim Limits) (*parquet.File, error) {
	pf, _, err := openParquetFile(r, size, nil, lim, true, nil)
	return pf, err
}

// openParquetFile opens r as the exported functions do, and returns what
// pf reads as well (view): r, or a view of it with another footer or its
// LZ4_RAW chunks decompressed after its data, whose offsets are not the
// file's (fileOffset maps them back).
func openParquetFile(r io.ReaderAt, size int64, read *parquet.Schema, lim Limits, trustCRC bool, fold []string) (
	pf *parquet.File, view io.ReaderAt, err error) {
	defer Recover(&err, "Parquet")
	md, dataEnd, err := readFooter(r, size, lim)
	if err != nil {
		return nil, nil, err
	}
	if err := checkMetadata(md, dataEnd, lim); err != nil {
		return nil, nil, err
	}
	if renamed, err := foldNames(md, fold); err != nil {
		return nil, nil, err
	} else if renamed { // parquet-go reads the footer again: this one
		if r, size, err = refoot(r, dataEnd, md); err != nil {
			return nil, nil, err
		}
	}
	opts := []parquet.FileOption{parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true)}
	pf, err = parquet.OpenFile(r, size, opts...)
	if err != nil {
		return nil, nil, corrupt("%v", err)
	}
	lz, err := scanPages(r, pf, read, lim, trustCRC)
	switch {
	case err != nil:
		return nil, nil, err
	case len(lz) == 0:
		return pf, r, nil
	}
	// parquet-go misreads LZ4_RAW: it reads those chunks decompressed.
	if r, size, err = unpackLZ4(r, dataEnd, md, lz); err != nil {
		return nil, nil, err
	}
	if pf, err = parquet.OpenFile(r, size, opts...); err != nil {
		return nil, nil, corrupt("%v", err)
	}
	return pf, r, nil
}

// readFooter reads and decodes the file metadata; dataEnd is where the
// footer starts, the end of the column chunks.
func readFooter(r io.ReaderAt, size int64, lim Limits) (*format.FileMetaData, int64, error) {
	if size < 12 {
		return nil, 0, corrupt("%d bytes is too short for a Parquet file", size)
	}
	var head, tail [8]byte
	if _, err := r.ReadAt(head[:4], 0); err != nil {
		return nil, 0, corrupt("reading the header: %v", err)
	}
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return nil, 0, corrupt("reading the footer: %v", err)
	}
	if string(head[:4]) != "PAR1" {
		return nil, 0, corrupt("no PAR1 magic at the start")
	}
	switch string(tail[4:]) {
	case "PAR1":
	case "PARE":
		return nil, 0, fmt.Errorf("%w: the file is encrypted", ErrUnsupported)
	default:
		return nil, 0, corrupt("no PAR1 magic at the end (truncated file?)")
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n > size-12 {
		return nil, 0, corrupt("the footer claims %d bytes in a %d-byte file (truncated file?)", n, size)
	}
	if n > lim.MaxFooterBytes {
		return nil, 0, fmt.Errorf("%w: the footer has %d bytes (limit %d)", ErrLimit, n, lim.MaxFooterBytes)
	}
	dataEnd := size - 8 - n
	buf := make([]byte, n)
	if _, err := r.ReadAt(buf, dataEnd); err != nil {
		return nil, 0, corrupt("reading the footer: %v", err)
	}
	shape, err := walkThrift(buf)
	switch {
	case err == errShort:
		return nil, 0, corrupt("the footer is truncated or declares more than it holds")
	case err != nil:
		return nil, 0, corrupt("footer: %v", err)
	case shape.size != len(buf):
		return nil, 0, corrupt("the footer has %d unexpected trailing bytes", len(buf)-shape.size)
	case shape.goBytes() > lim.MaxMetadataBytes:
		return nil, 0, fmt.Errorf("%w: the footer would decode into about %d bytes of metadata (limit %d)",
			ErrLimit, shape.goBytes(), lim.MaxMetadataBytes)
	}
	md := new(format.FileMetaData)
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), buf, md); err != nil {
		return nil, 0, corrupt("footer: %v", err)
	}
	return md, dataEnd, nil
}

// checkMetadata checks the schema's shape, the row counts and sizes the
// metadata declares, and that every column chunk lies within the file.
func checkMetadata(md *format.FileMetaData, dataEnd int64, lim Limits) error {
	if len(md.Schema) == 0 {
		return corrupt("the schema is empty")
	}
	var open []int32 // children still to come, per ancestor
	for i := range md.Schema {
		el := &md.Schema[i]
		if len(open) > lim.MaxSchemaDepth {
			return fmt.Errorf("%w: the schema nests deeper than %d", ErrLimit, lim.MaxSchemaDepth)
		}
		if el.Type.Valid && el.Type.V == format.FixedLenByteArray && (el.TypeLength.V < 0 || el.TypeLength.V > 1<<20) {
			return corrupt("column %q: FIXED_LEN_BYTE_ARRAY length %d", el.Name, el.TypeLength.V)
		}
		if c := el.NumChildren; c.Valid && c.V > 0 {
			if int(c.V) > len(md.Schema)-i-1 {
				return corrupt("schema element %q claims %d children, %d elements follow", el.Name, c.V, len(md.Schema)-i-1)
			}
			open = append(open, c.V)
			continue
		}
		for len(open) > 0 {
			if open[len(open)-1]--; open[len(open)-1] > 0 {
				break
			}
			open = open[:len(open)-1]
		}
	}
	if md.NumRows < 0 || md.NumRows > lim.MaxRows {
		return rowsError("the file", md.NumRows, lim.MaxRows)
	}
	var rows int64
	for i := range md.RowGroups {
		rg := &md.RowGroups[i]
		if rg.NumRows < 0 || rg.NumRows > lim.MaxRowGroupRows {
			return rowsError(fmt.Sprintf("row group %d", i), rg.NumRows, lim.MaxRowGroupRows)
		}
		if rows += rg.NumRows; rows > lim.MaxRows {
			return rowsError("the row groups", rows, lim.MaxRows)
		}
		if rg.TotalByteSize < 0 || rg.TotalByteSize > lim.MaxRowGroupBytes {
			return bytesError(i, rg.TotalByteSize, lim)
		}
		var bytes int64
		for j := range rg.Columns {
			if err := checkChunk(&rg.Columns[j].MetaData, dataEnd); err != nil {
				return corrupt("row group %d column %q: %v", i, strings.Join(rg.Columns[j].MetaData.PathInSchema, "."), err)
			}
			if bytes += rg.Columns[j].MetaData.TotalUncompressedSize; bytes > lim.MaxRowGroupBytes {
				return bytesError(i, bytes, lim)
			}
		}
	}
	// Readers size their output from the file's count (statecol's
	// ReadStateFile allocates it at once): one damaged varint must not
	// make them allocate hundreds of gigabytes.
	if rows != md.NumRows {
		return corrupt("the footer declares %d rows, its row groups %d", md.NumRows, rows)
	}
	return nil
}

func rowsError(what string, n, limit int64) error {
	if n < 0 {
		return corrupt("%s declares %d rows", what, n)
	}
	return fmt.Errorf("%w: %s declares %d rows (limit %d)", ErrLimit, what, n, limit)
}

func bytesError(rg int, n int64, lim Limits) error {
	if n < 0 {
		return corrupt("row group %d declares %d bytes", rg, n)
	}
	return fmt.Errorf("%w: row group %d declares %d uncompressed bytes (limit %d)", ErrLimit, rg, n, lim.MaxRowGroupBytes)
}

// chunkStart is where a column chunk's first page is, as parquet-go reads it.
func chunkStart(md *format.ColumnMetaData) int64 {
	if md.DictionaryPageOffset != 0 {
		return md.DictionaryPageOffset
	}
	return md.DataPageOffset
}

func checkChunk(md *format.ColumnMetaData, dataEnd int64) error {
	start, n := chunkStart(md), md.TotalCompressedSize
	switch {
	case md.NumValues < 0 || md.TotalUncompressedSize < 0 || n < 0:
		return fmt.Errorf("negative counts or sizes")
	case start < 4 || start > dataEnd || n > dataEnd-start:
		return fmt.Errorf("%d bytes at offset %d extend past the end of the data (%d)", n, start, dataEnd)
	case md.DataPageOffset < start || md.DataPageOffset > start+n:
		return fmt.Errorf("data page offset %d outside the chunk", md.DataPageOffset)
	}
	return nil
}
