package rowio

import (
	"fmt"
	"math/bits"
	"strings"
)

// Limits.MaxValueBytes bounds the values of some columns (merge: an info
// dictionary and what is taken from it, at most --max-metadata-size
// each). parquet-go reads a page whole, compressed and then decompressed,
// before it hands out a value: a page holding one value of 100 MiB that
// zstd shrank to 28 KB took 210 MB before anyone could look at the
// value's length. A page of such a column is refused from its header
// when it declares more bytes than its values could take at the bound
// each (valueBound): counted from the header (a dictionary page, a v2
// data page's values less its nulls), or else from its definition
// levels (a v1 data page of an optional or repeated column).

// Per value, a page holds its length (PLAIN: 4 bytes; DELTA_*: a few
// bytes of packed lengths) besides its bytes; a page holds its levels
// (at most 2 bytes a level: levels up to 16 bits wide, RLE or packed)
// and the headers of its delta runs besides its values.
const (
	valueOverhead = 32
	pageOverhead  = 1 << 10
)

// valueBound is the most a page of n levels (values and nulls) holding
// present values of at most max bytes each can take uncompressed. Every
// writer's honest page is within it, however many values it puts in a
// page (fetch's: at most one value past 256 KiB; DuckDB's: up to 100 MB).
func valueBound(n, present, max int64) int64 {
	return present*(max+valueOverhead) + 2*n + pageOverhead
}

// ValueLimitError is a page of a column bounded by Limits.MaxValueBytes
// that declares more bytes than its values may take.
type ValueLimitError struct {
	Column   string // the leaf's path, dotted
	RowGroup int    // counted from 0
	// FirstRow and Rows are the page's rows (FirstRow from 1) when the
	// column is not repeated, else 0.
	FirstRow, Rows int64
	Bytes          int64 // what the page declares, uncompressed
	Values         int64 // values (not nulls) in it
	Limit          int64 // bytes a value
	// Batch: the page is the data buffer of an Arrow record batch
	// (OpenArrowLimited), and RowGroup counts batches.
	Batch bool
}

func (e *ValueLimitError) Error() string {
	return fmt.Sprintf("%v: %s: %s declares %d bytes for %d values of at most %d bytes each",
		ErrLimit, e.Where(), e.Unit(), e.Bytes, e.Values, e.Limit)
}

// Where says which rows the page holds ("rows 1-3"), or else which row
// group or record batch it is in.
func (e *ValueLimitError) Where() string {
	switch {
	case e.Rows > 0:
		return fmt.Sprintf("rows %d-%d", e.FirstRow, e.FirstRow+e.Rows-1)
	case e.Batch:
		return fmt.Sprintf("record batch %d", e.RowGroup)
	}
	return fmt.Sprintf("row group %d", e.RowGroup)
}

// Unit names the page: "a page of column "c"", or "the "c" buffer of a
// record batch".
func (e *ValueLimitError) Unit() string {
	if e.Batch {
		return fmt.Sprintf("the %q buffer of a record batch", e.Column)
	}
	return fmt.Sprintf("a page of column %q", e.Column)
}

// Is makes a ValueLimitError an ErrLimit.
func (e *ValueLimitError) Is(target error) bool { return target == ErrLimit }

// valueCap is the bound Limits.MaxValueBytes sets for column path (0:
// none).
func (lim Limits) valueCap(path []string) int64 {
	if lim.MaxValueBytes == nil {
		return 0
	}
	return max(lim.MaxValueBytes(path), 0)
}

// overValue returns the error of a page of usize bytes (n levels, present
// values) over the bound vcap of the values of the column at path, or
// nil. rows: the page is a data page whose levels are rows, the first
// of them first in the row group.
func (s *pageScanner) overValue(path []string, rows bool, first, n, present, usize, vcap int64) error {
	if usize <= valueBound(n, present, vcap) {
		return nil
	}
	e := &ValueLimitError{Column: strings.Join(path, "."), RowGroup: s.rowGroup, Bytes: usize, Values: present, Limit: vcap}
	if rows {
		e.FirstRow, e.Rows = s.firstRow+first+1, n
	}
	return e
}

// countTop counts the levels equal to max among the first nv of b, runs
// of RLE/bit-packed hybrid levels walkLevels accepted: the values present
// in a page whose definition levels b are. Levels past nv (the padding of
// a last bit-packed run) are not counted.
func countTop(b []byte, max int, nv int64) int64 {
	var n int64
	hybridRuns(b, bits.Len(uint(max)), nv, func(v uint64, count int64) bool {
		if v == uint64(max) {
			n += count
		}
		return true
	})
	return n
}
