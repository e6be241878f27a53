package dedup

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/internal/exitcode"
)

// Arrow IPC streams (stdin: what capture writes) are read column by
// column too: each record batch's columns are copied into a slice of
// rows as the Parquet fast path does, then grouped by partition and
// folded. Filling a struct per row by reflection, then folding it, took
// 9-10 s for 10M observations (the Parquet fast path: ~1 s).

// arrowLayout is where an Arrow stream's columns are, by type; ok is false
// for a layout only the row reader takes (other integer widths, say).
type arrowLayout struct {
	hash, at, typ, src, v2 int   // column indexes, -1 when absent
	atMul, atDiv           int64 // observed_at in ms: v*atMul/atDiv
}

func arrowLayoutOf(s *arrow.Schema) (arrowLayout, bool) {
	col := func(name string) int {
		if ix := s.FieldIndices(name); len(ix) > 0 {
			return ix[0]
		}
		return -1
	}
	l := arrowLayout{hash: col("info_hash"), at: col("observed_at"), typ: col("hash_type"),
		src: col("source"), v2: col("info_hash_v2"), atMul: 1, atDiv: 1}
	typeOf := func(i int) arrow.Type {
		if i < 0 {
			return arrow.NULL
		}
		return s.Field(i).Type.ID()
	}
	binary := func(t arrow.Type) bool {
		return t == arrow.FIXED_SIZE_BINARY || t == arrow.BINARY || t == arrow.LARGE_BINARY
	}
	if !binary(typeOf(l.hash)) || (l.v2 >= 0 && !binary(typeOf(l.v2))) {
		return l, false
	}
	switch t := typeOf(l.at); t {
	case arrow.INT64:
	case arrow.TIMESTAMP:
		switch s.Field(l.at).Type.(*arrow.TimestampType).Unit {
		case arrow.Second:
			l.atMul = 1000
		case arrow.Microsecond:
			l.atDiv = 1000
		case arrow.Nanosecond:
			l.atDiv = 1_000_000
		}
	default:
		return l, false
	}
	if t := typeOf(l.typ); l.typ >= 0 && t != arrow.INT8 && t != arrow.INT32 && t != arrow.INT64 {
		return l, false
	}
	if t := typeOf(l.src); l.src >= 0 && t != arrow.STRING && t != arrow.LARGE_STRING {
		return l, false
	}
	return l, true
}

// readArrowColumns feeds every row of r, whose columns are laid out as l
// says, to b; it returns the rows read. bad makes a bad-input error
// naming the input.
func readArrowColumns(ctx context.Context, r *rowio.Reader[obsIn], l arrowLayout, b *batch,
	bad func(error) error) (int64, error) {
	var rows rgBuf
	var out recBuf
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		rec, err := r.Record()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil { // it names the input
			return n, exitcode.BadInput(fmt.Errorf("dedup: %w", err))
		}
		k := int(rec.NumRows())
		if err := rows.loadArrow(rec, l, b); err != nil {
			var re *rowError
			if errors.As(err, &re) {
				return n, bad(fmt.Errorf("row %d: %s", n+re.row, re.msg))
			}
			return n, bad(err)
		}
		if err := rows.checkRows(k, n); err != nil {
			return n, bad(err)
		}
		rows.scatter(k, &out)
		b.srcView = b.srcs
		b.addRows(&out)
		n += int64(k)
	}
}

// loadArrow copies the rows of record batch rec into rows [0, n).
func (r *rgBuf) loadArrow(rec arrow.Record, l arrowLayout, b *batch) error {
	n := int(rec.NumRows())
	imp := r.reset(n, b)
	if err := noNulls(rec.Column(l.hash), "info_hash"); err != nil {
		return err
	}
	hashes := rec.Column(l.hash).(interface{ Value(int) []byte })
	for i := range n {
		h := hashes.Value(i)
		if len(h) != 20 && len(h) != 32 {
			return &rowError{row: int64(i), msg: fmt.Sprintf("info_hash has %d bytes, want 20 (or 32 for v2)", len(h))}
		}
		r.putHash(i, h)
	}
	at := rec.Column(l.at)
	if err := noNulls(at, "observed_at"); err != nil {
		return err
	}
	switch a := at.(type) {
	case *array.Timestamp:
		for i, v := range a.TimestampValues()[:n] {
			r.at[i] = int64(v) * l.atMul / l.atDiv
		}
	case *array.Int64:
		for i, v := range a.Int64Values()[:n] {
			r.at[i] = v * l.atMul / l.atDiv
		}
	}
	if l.typ >= 0 {
		c := rec.Column(l.typ)
		for i := range n {
			if c.IsNull(i) {
				continue
			}
			switch a := c.(type) {
			case *array.Int8:
				r.typ[i] = a.Value(i)
			case *array.Int32:
				r.typ[i] = int8(a.Value(i))
			case *array.Int64:
				r.typ[i] = int8(a.Value(i))
			}
		}
	}
	if l.src >= 0 {
		c := rec.Column(l.src)
		strs := c.(interface{ Value(int) string })
		var last string
		lastID := imp
		for i := range n {
			if c.IsNull(i) {
				continue
			}
			s := strs.Value(i)
			if s != last {
				last, lastID = s, imp
				if s != "" {
					lastID = b.intern(s)
				}
			}
			r.src[i] = lastID
		}
	}
	if l.v2 >= 0 {
		c := rec.Column(l.v2)
		vals := c.(interface{ Value(int) []byte })
		for i := range n {
			if !c.IsNull(i) {
				if v := vals.Value(i); len(v) == 32 {
					r.keepV2(i, v)
				}
			}
		}
	}
	r.typeLongHashes()
	return nil
}

// noNulls is a rowError for c's first null.
func noNulls(c arrow.Array, name string) error {
	if c.NullN() == 0 {
		return nil
	}
	for i := range c.Len() {
		if c.IsNull(i) {
			return &rowError{row: int64(i), msg: name + " is null"}
		}
	}
	return nil
}
