package statecol

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"

	"github.com/klauspost/compress/s2"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/rle"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/infohash/infohash/formats/schema"
)

// WriteState writes rows (sorted by info_hash, as state files are) to w
// as one Parquet file of the state schema, column by column: the values
// are laid out straight from the rows (PLAIN, dictionary pages for the
// low-cardinality strings), one Snappy-compressed page per column chunk.
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
	t, err := stateTemplate()
	if err != nil {
		return err
	}
	sw := writers.Get().(*stateWriter)
	defer writers.Put(sw)
	sw.t, sw.off = t, 4
	sw.w.Reset(w)
	defer sw.w.Reset(nil)
	if _, err := sw.w.WriteString("PAR1"); err != nil {
		return err
	}
	md := format.FileMetaData{Version: 1, Schema: t.schema, NumRows: int64(len(rows)),
		ColumnOrders: t.orders, CreatedBy: "infohash statecol"}
	for start := 0; start < len(rows); start += rowGroupRows {
		rg, err := sw.rowGroup(rows[start:min(len(rows), start+rowGroupRows)], len(md.RowGroups))
		if err != nil {
			return err
		}
		md.RowGroups = append(md.RowGroups, rg)
	}
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
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

// writers keeps stateWriters (their buffers) between files.
var writers = sync.Pool{New: func() any {
	// A buffer of its own: bufio.NewWriterSize(w) would return w itself
	// when it is a large enough *bufio.Writer, and the pool would then
	// share the caller's writer between goroutines.
	return &stateWriter{w: bufio.NewWriterSize(io.Discard, 1<<20)}
}}

// stateWriter writes one file; its buffers are reused across row groups
// and, through writers, across files.
type stateWriter struct {
	t   *template
	w   *bufio.Writer
	off int64

	cols   [numStateColumns]colBuf
	levels []byte
	body   []byte
	comp   []byte
}

// The state columns in file order (checked against the template).
const (
	cInfoHash = iota
	cInfoHashV2
	cHashType
	cFirstSeen
	cLastSeen
	cSeenCount
	cLastSource
	cActivity
	cMetadataStatus
	cAttempts
	cLastAttempt
	cLastFailure
	cNextRetry
	cLeaseID
	cLeaseUntil
	cTier
	cBackoffStep
	cBadMetadata
	cReactivated
	cAvoidPeers
	numStateColumns
)

var stateColumnNames = [numStateColumns]string{"info_hash", "info_hash_v2", "hash_type", "first_seen",
	"last_seen", "seen_count", "last_source", "activity", "metadata_status", "attempts", "last_attempt",
	"last_failure", "next_retry", "lease_id", "lease_until", "tier", "backoff_step", "bad_metadata",
	"reactivated_at", "avoid_peers"}

// colBuf is one column chunk's content as it is laid out.
type colBuf struct {
	vals     []byte  // PLAIN values
	def, rep []uint8 // levels (optional and list columns)
	idx      []int32 // dictionary indexes
	entries  int     // level entries (rows, or list elements + empty lists)
	nulls    int64
	lo, hi   int64 // integer statistics
	hasStats bool
	min, max []byte // info_hash statistics

	dictCol bool // a dictionary-encoded string column
	plain   bool // it had too many distinct values: PLAIN from then on
	dict    []string
	ids     map[string]int32
	last    string
	lastID  int32
}

func (c *colBuf) reset(rows int) {
	c.vals, c.def, c.rep, c.idx = c.vals[:0], c.def[:0], c.rep[:0], c.idx[:0]
	c.entries, c.nulls, c.hasStats = rows, 0, false
	c.lo, c.hi = math.MaxInt64, math.MinInt64
	c.min, c.max = nil, nil
	c.plain, c.dict, c.ids, c.lastID = false, c.dict[:0], nil, -1
}

// int64v appends a required INT64.
func (c *colBuf) int64v(v int64) {
	c.vals = binary.LittleEndian.AppendUint64(c.vals, uint64(v))
	c.lo, c.hi = min(c.lo, v), max(c.hi, v)
}

// optInt64 appends an optional INT64 (0 is null).
func (c *colBuf) optInt64(v int64) {
	if v == 0 {
		c.def = append(c.def, 0)
		c.nulls++
		return
	}
	c.def = append(c.def, 1)
	c.int64v(v)
}

// int32v appends a required INT32.
func (c *colBuf) int32v(v int32) {
	c.vals = binary.LittleEndian.AppendUint32(c.vals, uint32(v))
	c.lo, c.hi = min(c.lo, int64(v)), max(c.hi, int64(v))
}

// str appends a string of a dictionary column.
func (c *colBuf) str(v string) {
	if c.lastID >= 0 && v == c.last {
		c.idx = append(c.idx, c.lastID)
		return
	}
	c.strSlow(v)
}

// optStr appends an optional string ("" is null).
func (c *colBuf) optStr(v string) {
	if v == "" {
		c.def = append(c.def, 0)
		c.nulls++
		return
	}
	c.def = append(c.def, 1)
	c.str(v)
}

// maxDictValues is the most distinct strings a chunk is
// dictionary-encoded with; past it the values are written PLAIN.
const maxDictValues = 4096

func (c *colBuf) strSlow(v string) {
	if c.plain {
		c.vals = binary.LittleEndian.AppendUint32(c.vals, uint32(len(v)))
		c.vals = append(c.vals, v...)
		return
	}
	id := int32(-1)
	if c.ids != nil {
		if k, ok := c.ids[v]; ok {
			id = k
		}
	} else {
		for k, d := range c.dict {
			if d == v {
				id = int32(k)
				break
			}
		}
	}
	if id < 0 {
		if len(c.dict) == maxDictValues {
			// Too many distinct values: lay out what was indexed as
			// PLAIN values and go on that way.
			for _, k := range c.idx {
				c.vals = binary.LittleEndian.AppendUint32(c.vals, uint32(len(c.dict[k])))
				c.vals = append(c.vals, c.dict[k]...)
			}
			c.plain, c.idx = true, c.idx[:0]
			c.strSlow(v)
			return
		}
		id = int32(len(c.dict))
		c.dict = append(c.dict, v)
		switch {
		case c.ids != nil:
			c.ids[v] = id
		case len(c.dict) > 16:
			c.ids = make(map[string]int32, 64)
			for k, d := range c.dict {
				c.ids[d] = int32(k)
			}
		}
	}
	c.last, c.lastID = v, id
	c.idx = append(c.idx, id)
}

func (sw *stateWriter) rowGroup(rows []schema.State, ordinal int) (format.RowGroup, error) {
	rg := format.RowGroup{NumRows: int64(len(rows)), FileOffset: sw.off, Ordinal: int16(ordinal)}
	sw.fill(rows)
	for k, leaf := range sw.t.leaves {
		cc, err := sw.writeChunk(leaf, &sw.cols[k])
		if err != nil {
			return rg, fmt.Errorf("statecol: column %s: %w", leaf.path[0], err)
		}
		rg.Columns = append(rg.Columns, cc)
		rg.TotalByteSize += cc.MetaData.TotalUncompressedSize
		rg.TotalCompressedSize += cc.MetaData.TotalCompressedSize
	}
	return rg, nil
}

// fill lays out every column of rows in one pass over them: each row's
// cache lines are read once, where a pass per column read them 20 times.
func (sw *stateWriter) fill(rows []schema.State) {
	c := &sw.cols
	for k := range c {
		c[k].reset(len(rows))
		c[k].dictCol = k == cLastSource || k == cMetadataStatus || k == cTier || k == cLastFailure || k == cLeaseID
	}
	c[cInfoHash].vals = slices.Grow(c[cInfoHash].vals, 20*len(rows))
	for _, k := range []int{cFirstSeen, cLastSeen, cSeenCount, cActivity} {
		c[k].vals = slices.Grow(c[k].vals, 8*len(rows))
	}
	c[cAvoidPeers].entries = 0
	for i := range rows {
		s := &rows[i]
		c[cInfoHash].vals = append(c[cInfoHash].vals, s.InfoHash[:]...)
		if v := s.InfoHashV2; len(v) > 0 {
			c[cInfoHashV2].def = append(c[cInfoHashV2].def, 1)
			c[cInfoHashV2].vals = binary.LittleEndian.AppendUint32(c[cInfoHashV2].vals, uint32(len(v)))
			c[cInfoHashV2].vals = append(c[cInfoHashV2].vals, v...)
		} else {
			c[cInfoHashV2].def = append(c[cInfoHashV2].def, 0)
			c[cInfoHashV2].nulls++
		}
		c[cHashType].int32v(int32(s.HashType))
		c[cFirstSeen].int64v(s.FirstSeen)
		c[cLastSeen].int64v(s.LastSeen)
		c[cSeenCount].int64v(s.SeenCount)
		c[cLastSource].str(s.LastSource)
		c[cActivity].vals = binary.LittleEndian.AppendUint64(c[cActivity].vals, math.Float64bits(s.Activity))
		c[cMetadataStatus].str(s.MetadataStatus)
		c[cAttempts].int32v(s.Attempts)
		c[cLastAttempt].optInt64(s.LastAttempt)
		c[cLastFailure].optStr(s.LastFailure)
		c[cNextRetry].optInt64(s.NextRetry)
		c[cLeaseID].optStr(s.LeaseID)
		c[cLeaseUntil].optInt64(s.LeaseUntil)
		c[cTier].str(s.Tier)
		c[cBackoffStep].int32v(s.BackoffStep)
		c[cBadMetadata].int32v(s.BadMetadata)
		c[cReactivated].optInt64(s.Reactivated)
		// required group (LIST) > repeated group list > required element:
		// one entry per element, or one null entry for an empty list.
		ap := &c[cAvoidPeers]
		if len(s.AvoidPeers) == 0 {
			ap.rep, ap.def = append(ap.rep, 0), append(ap.def, 0)
			ap.entries++
		}
		for k, p := range s.AvoidPeers {
			ap.rep, ap.def = append(ap.rep, min(uint8(k), 1)), append(ap.def, 1)
			ap.vals = binary.LittleEndian.AppendUint32(ap.vals, uint32(len(p)))
			ap.vals = append(ap.vals, p...)
			ap.entries++
		}
	}
	for k := range c {
		c[k].hasStats = c[k].lo <= c[k].hi
	}
	c[cActivity].hasStats = false
	if len(rows) > 0 {
		lo, hi := 0, 0
		for i := range rows {
			if bytes.Compare(rows[i].InfoHash[:], rows[lo].InfoHash[:]) < 0 {
				lo = i
			} else if bytes.Compare(rows[i].InfoHash[:], rows[hi].InfoHash[:]) > 0 {
				hi = i
			}
		}
		c[cInfoHash].min, c[cInfoHash].max = bytes.Clone(rows[lo].InfoHash[:]), bytes.Clone(rows[hi].InfoHash[:])
	}
}

// writeChunk writes c's pages (dictionary, then one data page) and returns
// its metadata.
func (sw *stateWriter) writeChunk(leaf leafColumn, c *colBuf) (format.ColumnChunk, error) {
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
	md := format.ColumnMetaData{Type: leaf.typ, PathInSchema: leaf.path, Codec: format.Snappy,
		NumValues: int64(c.entries), Statistics: st}
	dictIdx := c.dictCol && !c.plain && len(c.dict) > 0
	var uncompressed int64
	valuesEnc := format.Plain
	if dictIdx {
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
	if leaf.path[0] == "avoid_peers" {
		if sw.body, err = sw.appendLevels(sw.body, c.rep); err != nil {
			return format.ColumnChunk{}, err
		}
	}
	if len(c.def) > 0 || (c.entries == 0 && c.def != nil) {
		if sw.body, err = sw.appendLevels(sw.body, c.def); err != nil {
			return format.ColumnChunk{}, err
		}
	}
	if dictIdx {
		enc := rle.DictionaryEncoding{}
		if c.vals, err = enc.EncodeInt32(c.vals[:0], c.idx); err != nil {
			return format.ColumnChunk{}, err
		}
	}
	sw.body = append(sw.body, c.vals...)
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
	if n := s2.MaxEncodedLen(len(body)); cap(sw.comp) < n {
		sw.comp = make([]byte, n)
	}
	sw.comp = s2.EncodeSnappy(sw.comp[:cap(sw.comp)], body)
	h.UncompressedPageSize = int32(len(body))
	h.CompressedPageSize = int32(len(sw.comp))
	hdr, err := thrift.Marshal(new(thrift.CompactProtocol), h)
	if err != nil {
		return 0, fmt.Errorf("statecol: page header: %w", err)
	}
	sw.w.Write(hdr)
	if _, err := sw.w.Write(sw.comp); err != nil {
		return 0, err
	}
	sw.off += int64(len(hdr) + len(sw.comp))
	return int64(len(hdr) + len(body)), nil
}
