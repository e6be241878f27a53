// Splice: a copy of a state file with some rows changed, re-encoding only
// the columns that changed.

package statecol

import (
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/infohash/infohash/formats/schema"
)

// ErrSpliceSchema is returned by Splice for a source file whose schema is
// not the current state schema (an older format): rewrite it instead.
var ErrSpliceSchema = errors.New("statecol: the file's schema is not the current state schema")

// Splice writes to w a copy of the state file src in which fn changes
// some rows in place. touched(first, n) says whether the row group of
// rows [first, first+n) holds rows to change; if so its rows are decoded,
// fn(first, rows) changes them (keeping every info_hash and the order)
// and returns the columns it changed: those columns are re-encoded, and
// every other column chunk is copied byte for byte, compressed pages and
// all. A row group nobody touches is copied whole without being decoded.
//
// So an update of a few columns of a big file costs reading it and
// re-encoding those columns, not a full rewrite.
//
// Only the columns in need are decoded for fn (the others read as zero
// values); fn must not change a column it does not need.
func Splice(w io.Writer, src *File, need Columns, touched func(first, n int64) bool, fn func(first int64, rows []schema.State) (Columns, error)) error {
	if err := src.Spliceable(); err != nil {
		return err
	}
	meta := src.pf.Metadata()
	sw, md, err := beginState(w, meta.NumRows)
	if err != nil {
		return err
	}
	defer sw.release()
	// parquet-go reads a whole column with the codec of its first chunk:
	// a re-encoded chunk uses the codec the column already has.
	codecs := make([]format.CompressionCodec, numStateColumns)
	for k := range codecs {
		codecs[k] = defaultCodec(k)
		if len(meta.RowGroups) > 0 {
			codecs[k] = meta.RowGroups[0].Columns[k].MetaData.Codec
		}
	}
	var first int64
	for i, rg := range src.RowGroups() {
		n := rg.NumRows()
		var rows []schema.State
		var mask Columns
		if touched(first, n) {
			if cap(sw.rows) < int(n) {
				sw.rows = make([]schema.State, n)
			}
			// No clearing: the readers set every row of the columns in
			// need (nulls to zero values); the other fields keep what an
			// earlier row group left, which fn must not use and nothing
			// writes (mask ⊆ need).
			rows = sw.rows[:n]
			if err := src.readColumns(rg, rows, need); err != nil {
				return err
			}
			if mask, err = fn(first, rows); err != nil {
				return err
			}
			if mask&^need != 0 {
				return fmt.Errorf("statecol: splice changed columns %b it did not read", mask&^need)
			}
		}
		srcCols := meta.RowGroups[i].Columns
		out, err := sw.spliceRowGroup(rows, i, mask, codecs, func(col int) (format.ColumnChunk, error) {
			m := srcCols[col].MetaData
			start := m.DataPageOffset
			if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < start {
				start = m.DictionaryPageOffset
			}
			if start <= 0 || m.TotalCompressedSize < 0 {
				return format.ColumnChunk{}, fmt.Errorf("statecol: column %v: chunk at %d of %d bytes", m.PathInSchema, start, m.TotalCompressedSize)
			}
			got, err := io.CopyN(sw.w, io.NewSectionReader(src.f, start, m.TotalCompressedSize), m.TotalCompressedSize)
			if err != nil || got != m.TotalCompressedSize {
				return format.ColumnChunk{}, fmt.Errorf("statecol: copying column %v: %d of %d bytes: %v", m.PathInSchema, got, m.TotalCompressedSize, err)
			}
			shift := sw.off - start
			m.DataPageOffset += shift
			if m.DictionaryPageOffset > 0 {
				m.DictionaryPageOffset += shift
			}
			if m.IndexPageOffset > 0 {
				m.IndexPageOffset += shift
			}
			m.BloomFilterOffset, m.BloomFilterLength = 0, 0
			cc := format.ColumnChunk{FileOffset: sw.off, MetaData: m}
			sw.off += m.TotalCompressedSize
			return cc, nil
		})
		if err != nil {
			return err
		}
		out.NumRows = n
		md.RowGroups = append(md.RowGroups, out)
		first += n
	}
	return sw.finish(md)
}

// Spliceable reports (as ErrSpliceSchema) why Splice cannot copy from f:
// a schema other than the current state schema, or a codec the writer
// does not have (none, Snappy and zstd it has).
func (f *File) Spliceable() error {
	if !parquet.EqualNodes(f.pf.Schema(), parquet.SchemaOf(schema.State{})) {
		return ErrSpliceSchema
	}
	for _, rg := range f.pf.Metadata().RowGroups {
		for _, c := range rg.Columns {
			if c.MetaData.Codec != format.Snappy && c.MetaData.Codec != format.Zstd && c.MetaData.Codec != format.Uncompressed {
				return fmt.Errorf("%w (codec %v)", ErrSpliceSchema, c.MetaData.Codec)
			}
		}
	}
	return nil
}
