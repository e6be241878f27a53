package statecol

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"sync"
	"unsafe"

	"github.com/klauspost/compress/s2"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/encoding/delta"
	"github.com/parquet-go/parquet-go/encoding/rle"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/infohash/infohash/formats/schema"
)

// WriteState writes rows (sorted by info_hash, as state files are) to w
// as one Parquet file of the state schema, column by column: the values
// are laid out straight from the rows (PLAIN, dictionary pages for the
// low-cardinality strings, DELTA_BINARY_PACKED timestamps), one page per
// column chunk, Snappy-compressed (info_hash and the timestamps
// uncompressed: see defaultCodec).
// parquet-go's row writer spent 4-5x longer on the same rows, and state
// is rewritten by every dedup, merge and union.
//
// The schema (column order, types, logical and converted types) is taken
// from the file parquet-go writes for schema.State, so readers see the same
// schema whichever writer made a file; page headers and the footer are
// encoded with parquet-go's Thrift codec and levels with its RLE encoder.
// Zero timestamps, empty strings and empty v2 hashes are nulls in the
// optional columns, as parquet-go writes them.
func WriteState(w io.Writer, rows []schema.State) error {
	if err := checkWrite(rows, AllColumns, from(0)); err != nil {
		return err
	}
	sw, md, err := beginState(w, int64(len(rows)))
	if err != nil {
		return err
	}
	defer sw.release()
	for start := 0; start < len(rows); start += rowGroupRows {
		rg, err := sw.rowGroup(rows[start:min(len(rows), start+rowGroupRows)], len(md.RowGroups))
		if err != nil {
			return err
		}
		md.RowGroups = append(md.RowGroups, rg)
	}
	return sw.finish(md)
}

// defaultCodec is the codec of column k in a new file: Snappy, but none
// for info_hash, whose random bytes do not compress (Snappy only spent
// time finding that out, and wrote a few bytes more), nor for the
// timestamps, which deltaColumns already packs.
func defaultCodec(k int) format.CompressionCodec {
	if k == cInfoHash || deltaColumns[k] {
		return format.Uncompressed
	}
	return format.Snappy
}

// deltaColumns are the columns written DELTA_BINARY_PACKED: the
// timestamps and the integers. Rows are in hash order, so a timestamp is
// random from one row to the next, and Snappy found nothing to compress in
// the 8 bytes of a millisecond time taken at random over a month (and 0.64
// of them on a real crawl), at 500 MB/s; bit-packed deltas take ~4.1
// bytes over a month, 4.5 over a year, and are packed at 3 GB/s. The
// integers are mostly constant (hash_type, attempts...) or small
// (seen_count): packed deltas take a few bits, where Snappy had to
// decompress 4 or 8 bytes a value on every read (an incremental dedup
// into a 20M-hash state: -10%, and a state 3% smaller). Readers
// (parquet-go, DuckDB) decode any encoding, so files of both kinds mix
// freely.
var deltaColumns = func() (m [numStateColumns]bool) {
	for _, k := range []int{cFirstSeen, cLastSeen, cLastAttempt, cNextRetry, cLeaseUntil, cReactivated,
		cLastFailureAt, cPeersAt, cHashType, cSeenCount, cAttempts, cBackoffStep, cBadMetadata} {
		m[k] = true
	}
	return m
}()

// genRows is how many rows WriteStateFunc asks for at a time: their
// State structs stay in cache while their columns are laid out.
const genRows = 512

// WriteStateFunc is WriteState for n rows that gen makes on demand: it
// fills dst with rows start, start+1, ... (in info_hash order). No slice
// of all the rows is ever built: for a file of new hashes made from
// aggregates, building one (250 bytes a row) cost more than laying out
// its columns.
func WriteStateFunc(w io.Writer, n int, gen func(start int, dst []schema.State)) error {
	sw, md, err := beginState(w, int64(n))
	if err != nil {
		return err
	}
	defer sw.release()
	if cap(sw.gen) < genRows {
		sw.gen = make([]schema.State, genRows)
	}
	for start := 0; start < n; start += rowGroupRows {
		end := min(n, start+rowGroupRows)
		sw.fillBegin(end-start, AllColumns)
		for s := start; s < end; s += genRows {
			dst := sw.gen[:min(genRows, end-s)]
			gen(s, dst)
			if err := checkWrite(dst, AllColumns, from(s)); err != nil {
				return err
			}
			sw.fillRows(dst, AllColumns)
		}
		sw.fillEnd(AllColumns)
		rg, err := sw.writeRowGroup(end-start, len(md.RowGroups), AllColumns, nil, nil)
		if err != nil {
			return err
		}
		md.RowGroups = append(md.RowGroups, rg)
	}
	return sw.finish(md)
}

// beginState takes a writer from the pool and writes the file's magic.
func beginState(w io.Writer, rows int64) (*stateWriter, *format.FileMetaData, error) {
	t, err := stateTemplate()
	if err != nil {
		return nil, nil, err
	}
	sw := getWriter()
	sw.t, sw.off, sw.codec = t, 4, format.Snappy
	sw.w.Reset(w)
	if _, err := sw.w.WriteString("PAR1"); err != nil {
		sw.release()
		return nil, nil, err
	}
	md := &format.FileMetaData{Version: 1, Schema: t.schema, NumRows: rows,
		ColumnOrders: t.orders, CreatedBy: "infohash statecol"}
	return sw, md, nil
}

// release returns sw to the pool.
func (sw *stateWriter) release() {
	sw.w.Reset(io.Discard)
	select {
	case writers <- sw:
	default:
	}
}

// finish writes the footer and flushes.
func (sw *stateWriter) finish(md *format.FileMetaData) error {
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), md)
	if err != nil {
		return fmt.Errorf("statecol: footer: %w", err)
	}
	var tail [8]byte
	binary.LittleEndian.PutUint32(tail[:4], uint32(len(footer)))
	copy(tail[4:], "PAR1")
	sw.w.Write(footer)
	sw.w.Write(tail[:])
	return sw.w.Flush()
}

// RowGroupRows is the row group size of state files.
const RowGroupRows = 256 * 1024

// rowGroupRows is RowGroupRows, smaller in tests.
var rowGroupRows = RowGroupRows

// template is what every state file shares: parquet-go's schema of
// schema.State and the leaf columns in file order.
type template struct {
	schema []format.SchemaElement
	orders []format.ColumnOrder
	leaves []leafColumn
}

type leafColumn struct {
	path []string
	typ  format.Type
}

var stateTemplate = sync.OnceValues(func() (*template, error) {
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[schema.State](&buf)
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("statecol: schema template: %w", err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		return nil, fmt.Errorf("statecol: schema template: %w", err)
	}
	t := &template{schema: pf.Metadata().Schema, orders: pf.Metadata().ColumnOrders}
	for k, path := range pf.Schema().Columns() {
		l, _ := pf.Schema().Lookup(path...)
		if k >= numStateColumns || path[0] != stateColumnNames[k] {
			return nil, fmt.Errorf("statecol: schema.State's column %d is %v, the writer expects %s", k, path, stateColumnNames[min(k, numStateColumns-1)])
		}
		t.leaves = append(t.leaves, leafColumn{path: path, typ: format.Type(l.Node.Type().Kind())})
	}
	if len(t.leaves) != numStateColumns {
		return nil, fmt.Errorf("statecol: schema.State has %d columns, the writer expects %d", len(t.leaves), numStateColumns)
	}
	return t, nil
})

var zstdCodec = &zstd.Codec{Level: zstd.SpeedFastest}

// writers keeps idle stateWriters (and their buffers) between files: a
// channel rather than a sync.Pool, which drops its items at every garbage
// collection and so made each file allocate its buffers anew.
var writers = make(chan *stateWriter, 8)

func getWriter() *stateWriter {
	select {
	case sw := <-writers:
		return sw
	default:
		// A buffer of its own: bufio.NewWriterSize(w) would return w
		// itself when it is a large enough *bufio.Writer, and the writer
		// would then share the caller's buffer with later users.
		return &stateWriter{w: bufio.NewWriterSize(io.Discard, 1<<20)}
	}
}

// stateWriter writes one file; its buffers are reused across row groups
// and, through writers, across files.
type stateWriter struct {
	t   *template
	w   *bufio.Writer
	off int64

	cols  [numStateColumns]colBuf
	codec format.CompressionCodec // of the pages being written: Snappy, or a spliced file's own
	rows  []schema.State          // Splice's decoded row group
	sel   []schema.State          // Splice's changed rows
	gen   []schema.State          // WriteStateFunc's rows of the moment

	hashSet          bool // the row group's info_hash bounds so far
	hashMin, hashMax schema.Hash
	levels           []byte
	body             []byte
	comp             []byte
	ints             []int64 // a delta column's values
	int32s           []int32 // an INT32 delta column's values
	packed           []byte  // and their encoding
}

// rowGroup writes rows as one row group, every column laid out from them.
func (sw *stateWriter) rowGroup(rows []schema.State, ordinal int) (format.RowGroup, error) {
	sw.fill(rows, AllColumns)
	return sw.writeRowGroup(len(rows), ordinal, AllColumns, nil, nil)
}

// writeRowGroup writes a row group of n rows whose columns in mask are
// filled, the others copied by copyChunk (which writes the source chunk's
// bytes at sw.off and returns its metadata for there).
func (sw *stateWriter) writeRowGroup(n, ordinal int, mask Columns, codecs []format.CompressionCodec,
	copyChunk func(col int) (format.ColumnChunk, error)) (format.RowGroup, error) {
	rg := format.RowGroup{NumRows: int64(n), FileOffset: sw.off, Ordinal: int16(ordinal)}
	for k, leaf := range sw.t.leaves {
		var cc format.ColumnChunk
		var err error
		if mask&(1<<k) != 0 {
			if codecs != nil {
				sw.codec = codecs[k]
			} else {
				sw.codec = defaultCodec(k)
			}
			cc, err = sw.writeChunk(k, leaf, &sw.cols[k])
		} else {
			cc, err = copyChunk(k)
		}
		if err != nil {
			return rg, fmt.Errorf("statecol: column %s: %w", leaf.path[0], err)
		}
		rg.Columns = append(rg.Columns, cc)
		rg.TotalByteSize += cc.MetaData.TotalUncompressedSize
		rg.TotalCompressedSize += cc.MetaData.TotalCompressedSize
	}
	return rg, nil
}

// writeChunk writes c's pages (dictionary, then one data page) and returns
// its metadata.
func (sw *stateWriter) writeChunk(k int, leaf leafColumn, c *colBuf) (format.ColumnChunk, error) {
	start := sw.off
	st := format.Statistics{NullCount: c.nulls, MinValue: c.min, MaxValue: c.max}
	if c.hasStats {
		switch leaf.typ {
		case format.Int32:
			st.MinValue = binary.LittleEndian.AppendUint32(nil, uint32(c.lo))
			st.MaxValue = binary.LittleEndian.AppendUint32(nil, uint32(c.hi))
		case format.Int64:
			st.MinValue = binary.LittleEndian.AppendUint64(nil, uint64(c.lo))
			st.MaxValue = binary.LittleEndian.AppendUint64(nil, uint64(c.hi))
		}
	}
	md := format.ColumnMetaData{Type: leaf.typ, PathInSchema: leaf.path, Codec: sw.codec,
		NumValues: int64(c.entries), Statistics: st}
	dictIdx := c.dictCol && !c.plain && len(c.dict) > 0
	var uncompressed int64
	valuesEnc := format.Plain
	if deltaColumns[k] {
		valuesEnc = format.DeltaBinaryPacked
		md.Encoding = append(md.Encoding, format.DeltaBinaryPacked, format.RLE)
	} else if dictIdx {
		valuesEnc = format.RLEDictionary
		md.DictionaryPageOffset = sw.off
		sw.body = sw.body[:0]
		for _, d := range c.dict {
			sw.body = binary.LittleEndian.AppendUint32(sw.body, uint32(len(d)))
			sw.body = append(sw.body, d...)
		}
		h := format.PageHeader{Type: format.DictionaryPage}
		h.DictionaryPageHeader.Set(format.DictionaryPageHeader{NumValues: int32(len(c.dict)), Encoding: format.Plain})
		u, err := sw.page(&h, sw.body)
		if err != nil {
			return format.ColumnChunk{}, err
		}
		uncompressed += u
		md.Encoding = append(md.Encoding, format.Plain, format.RLE, format.RLEDictionary)
	} else {
		md.Encoding = append(md.Encoding, format.Plain, format.RLE)
	}
	md.DataPageOffset = sw.off
	sw.body = sw.body[:0]
	var err error
	if k == cAvoidPeers || k == cPeers {
		if sw.body, err = sw.appendLevels(sw.body, c.rep); err != nil {
			return format.ColumnChunk{}, err
		}
	}
	if len(c.def) > 0 || (c.entries == 0 && c.def != nil) {
		if sw.body, err = sw.appendLevels(sw.body, c.def); err != nil {
			return format.ColumnChunk{}, err
		}
	}
	switch {
	case deltaColumns[k]:
		if sw.body, err = sw.appendDelta(sw.body, c.vals, leaf.typ == format.Int32); err != nil {
			return format.ColumnChunk{}, err
		}
	case dictIdx:
		enc := rle.DictionaryEncoding{}
		if c.vals, err = enc.EncodeInt32(c.vals[:0], c.idx); err != nil {
			return format.ColumnChunk{}, err
		}
		sw.body = append(sw.body, c.vals...)
	default:
		sw.body = append(sw.body, c.vals...)
	}
	h := format.PageHeader{Type: format.DataPage}
	h.DataPageHeader.Set(format.DataPageHeader{NumValues: int32(c.entries), Encoding: valuesEnc,
		DefinitionLevelEncoding: format.RLE, RepetitionLevelEncoding: format.RLE})
	u, err := sw.page(&h, sw.body)
	if err != nil {
		return format.ColumnChunk{}, err
	}
	uncompressed += u
	md.TotalUncompressedSize = uncompressed
	md.TotalCompressedSize = sw.off - start
	return format.ColumnChunk{FileOffset: start, MetaData: md}, nil
}

// appendDelta appends the INT64 (or, with int32s, INT32) values laid out
// PLAIN in vals to dst, DELTA_BINARY_PACKED.
func (sw *stateWriter) appendDelta(dst, vals []byte, int32s bool) ([]byte, error) {
	var err error
	enc := &delta.BinaryPackedEncoding{}
	if int32s {
		sw.packed, err = enc.EncodeInt32(sw.packed[:0], plainInts(&sw.int32s, vals))
	} else {
		sw.packed, err = enc.EncodeInt64(sw.packed[:0], plainInts(&sw.ints, vals))
	}
	if err != nil {
		return dst, fmt.Errorf("statecol: delta encoding: %w", err)
	}
	return append(dst, sw.packed...), nil
}

// plainInts returns the little-endian integers of vals: vals itself seen
// as integers on a little-endian host when it is aligned for them (the
// column buffers are: the allocator aligns them), else decoded into *buf,
// grown as needed. Decoding a splice's re-encoded columns value by value
// into a second buffer was 3% of an incremental dedup.
func plainInts[T int32 | int64](buf *[]T, vals []byte) []T {
	size := int(unsafe.Sizeof(T(0)))
	n := len(vals) / size
	if p := unsafe.SliceData(vals); littleEndian && n > 0 && uintptr(unsafe.Pointer(p))%uintptr(size) == 0 {
		return unsafe.Slice((*T)(unsafe.Pointer(p)), n)
	}
	if cap(*buf) < n {
		*buf = make([]T, n)
	}
	out := (*buf)[:n]
	for i := range out {
		if size == 4 {
			out[i] = T(int32(binary.LittleEndian.Uint32(vals[4*i:])))
		} else {
			out[i] = T(int64(binary.LittleEndian.Uint64(vals[8*i:])))
		}
	}
	return out
}

// appendLevels appends a v1 data page's level section: the byte length,
// then the RLE/bit-packed levels (bit width 1: every state level is 0 or 1).
func (sw *stateWriter) appendLevels(dst []byte, levels []uint8) ([]byte, error) {
	enc := rle.Encoding{BitWidth: 1}
	var err error
	if sw.levels, err = enc.EncodeLevels(sw.levels[:0], levels); err != nil {
		return dst, err
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(sw.levels)))
	return append(dst, sw.levels...), nil
}

// page compresses body and writes it with its header h; it returns the
// uncompressed size, header included.
func (sw *stateWriter) page(h *format.PageHeader, body []byte) (int64, error) {
	if len(body) > math.MaxInt32/2 {
		return 0, fmt.Errorf("statecol: a page of %d bytes", len(body))
	}
	out := body // uncompressed: written as it is, not copied first
	switch sw.codec {
	case format.Uncompressed:
	case format.Snappy:
		if n := s2.MaxEncodedLen(len(body)); cap(sw.comp) < n {
			sw.comp = make([]byte, n)
		}
		sw.comp = s2.EncodeSnappy(sw.comp[:cap(sw.comp)], body)
		out = sw.comp
	case format.Zstd:
		var err error
		if sw.comp, err = zstdCodec.Encode(sw.comp[:0], body); err != nil {
			return 0, fmt.Errorf("statecol: zstd: %w", err)
		}
		out = sw.comp
	default:
		return 0, fmt.Errorf("statecol: no encoder for codec %v", sw.codec)
	}
	h.UncompressedPageSize = int32(len(body))
	h.CompressedPageSize = int32(len(out))
	// Every reader going through parquet-go (dedup, merge, plan, export,
	// status) checks it, and a splice copies it with the page, so damage
	// on disk is an error wherever the page is read, not a wrong hash.
	h.CRC = int32(crc32.ChecksumIEEE(out))
	hdr, err := thrift.Marshal(new(thrift.CompactProtocol), h)
	if err != nil {
		return 0, fmt.Errorf("statecol: page header: %w", err)
	}
	sw.w.Write(hdr)
	if _, err := sw.w.Write(out); err != nil {
		return 0, err
	}
	sw.off += int64(len(hdr) + len(out))
	return int64(len(hdr) + len(body)), nil
}
