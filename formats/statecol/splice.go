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

// layOut fills the column buffers of the columns in mask for a row group
// of n rows whose rows sel (offsets) changed into st: the transcodable
// ones and the peer lists from their old pages, the others (rare: v2
// hashes; a list chunk not from our writer's layout) decoded into rows,
// the changed rows put in, and laid out by fill.
func (sw *stateWriter) layOut(src *File, rg parquet.RowGroup, n int, mask Columns, sel []int32, st []schema.State) error {
	rest := mask &^ transcodableMask
	sw.fillBegin(n, rest)
	rest, err := sw.transcodeLists(src, rg, rest, n, sel, st)
	if err != nil {
		return err
	}
	if rest != 0 {
		if cap(sw.rows) < n {
			sw.rows = make([]schema.State, n)
		}
		rows := sw.rows[:n]
		if err := src.readColumns(rg, allRows(rows), rest); err != nil {
			return err
		}
		for k, r := range sel {
			rows[r] = st[k]
		}
		sw.fillRows(rows, rest)
	}
	sw.fillEnd(rest)
	for k := range numStateColumns {
		if (mask&transcodableMask)&(1<<k) != 0 {
			if err := sw.transcode(src, rg, k, n, sel, st); err != nil {
				return err
			}
		}
	}
	return nil
}

// ErrSpliceSchema is returned by Splice for a source file whose schema is
// not the current state schema (an older format): rewrite it instead.
var ErrSpliceSchema = errors.New("statecol: the file's schema is not the current state schema")

// Splice writes to w a copy of the state file src in which fn changes
// some rows in place. touched(first, n) lists the rows to change in the
// row group of rows [first, first+n), as sorted offsets in it; fn(first,
// sel, st) gets those rows decoded (st[i] is row first+sel[i]), changes
// them (keeping every info_hash) and returns the columns it changed. Those
// columns are re-encoded (decoded whole, the changed rows put in), and
// every other column chunk is copied byte for byte, compressed pages and
// all. A row group nobody touches is copied whole without being decoded.
//
// So an update of a few rows of a big file costs reading it and
// re-encoding the columns that changed, not a full rewrite; only the
// changed rows are decoded in full.
//
// Only the columns in need are decoded for fn (the others read as zero
// values); fn must not change a column it does not need.
//
// Every chunk's statistics are exact, re-encoded or copied.
//
// The bytes of src read meanwhile are summed, and before the footer is
// written the whole file is checked against the size and CRC-32C its
// manifest records (rowio.FileSummer.Check; src's rowio.DataFile.Sum): a
// mismatch is a *rowio.FooterError naming the file, and the copy fails.
func Splice(w io.Writer, src *File, need Columns, touched func(first, n int64) []int32,
	fn func(first int64, sel []int32, st []schema.State) (Columns, error)) (err error) {
	defer recoverCorrupt(&err, src.f.Name())
	if err := src.Spliceable(); err != nil {
		return err
	}
	// Every byte copied or decoded is summed as it is read: the copy must
	// not carry damage into a file with a new, valid checksum.
	src.sum.Start()
	meta := src.pf.Metadata()
	sw, md, err := beginState(w, meta.NumRows)
	if err != nil {
		return err
	}
	defer sw.release()
	defer src.releasePages() // kept by a row group that failed
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
		var mask Columns
		if sel := touched(first, n); len(sel) > 0 {
			for k, r := range sel {
				if r < 0 || int64(r) >= n || (k > 0 && r <= sel[k-1]) {
					return fmt.Errorf("statecol: splice: row %d of a row group of %d out of order or range", r, n)
				}
			}
			if cap(sw.sel) < len(sel) {
				sw.sel = make([]schema.State, len(sel))
			}
			// No clearing: the readers set the columns in need of every
			// selected row (nulls to zero values); the other fields keep
			// what an earlier row group left, which fn must not use and
			// nothing writes (mask ⊆ need).
			st := sw.sel[:len(sel)]
			src.keepPages(need, i, rg) // for layOut, which reads the changed ones again
			if err := src.readColumns(rg, &rowsOut{st: st, sel: sel, n: int(n), first: first}, need); err != nil {
				return err
			}
			if mask, err = fn(first, sel, st); err != nil {
				return err
			}
			if mask&^need != 0 {
				return fmt.Errorf("statecol: splice changed columns %b it did not read", mask&^need)
			}
			if err := checkWrite(st, mask, func(i int) int64 { return first + int64(sel[i]) }); err != nil {
				return err
			}
			err := sw.layOut(src, rg, int(n), mask, sel, st)
			src.releasePages() // before the copies: only this row group needed them
			if err != nil {
				return err
			}
		}
		srcCols := meta.RowGroups[i].Columns
		out, err := sw.writeRowGroup(int(n), i, mask, codecs, func(col int) (format.ColumnChunk, error) {
			m := srcCols[col].MetaData
			start := m.DataPageOffset
			if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < start {
				start = m.DictionaryPageOffset
			}
			if start <= 0 || m.TotalCompressedSize < 0 {
				return format.ColumnChunk{}, fmt.Errorf("statecol: column %v: chunk at %d of %d bytes", m.PathInSchema, start, m.TotalCompressedSize)
			}
			// With nothing buffered, sw.w hands the copy to the output's
			// ReadFrom if it has one (dedup's staged files: read straight
			// into the buffer bound for the disk).
			if err := sw.w.Flush(); err != nil {
				return format.ColumnChunk{}, err
			}
			got, err := io.CopyN(sw.w, io.NewSectionReader(src.r, start, m.TotalCompressedSize), m.TotalCompressedSize)
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
	if err := src.sum.Check(); err != nil {
		return err // a *rowio.FooterError naming the file
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
