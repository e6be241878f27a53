package rowio

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Arrow writers dictionary-encode a column when asked, and some on their
// own: pyarrow writes a pandas Categorical so, Polars its Categorical and
// Enum, DuckDB an ENUM, arrow-go a column built with a dictionary
// builder. Such a column of text or bytes was refused as wrong schema
// ("column \"source\" is dictionary<values=utf8, indices=int8, ...>,
// want text"), though it holds the same values. The readers of this
// package (bind) and the column readers of its callers take plain
// columns, so a dictionary-encoded column whose values they could read
// is decoded into a plain one as each record batch arrives (undict), and
// the schema the Reader shows has the plain type (denseSchema). arrow-go
// hands each batch with the dictionary in force for it, after any
// replacement or delta dictionary batch before it.

// denseType is the type a dictionary-encoded column of type t is decoded
// to: binary for bytes (binary, large_binary, binary_view), utf8 for text
// (utf8, large_utf8, utf8_view), the value type itself for one of whole
// bytes of fixed width (integers, timestamps, fixed_size_binary); nil for
// a column that is not dictionary-encoded or whose values are of another
// type (booleans, nested types), which stays as it is.
func denseType(t arrow.DataType) arrow.DataType {
	dt, ok := t.(*arrow.DictionaryType)
	if !ok {
		return nil
	}
	switch v := dt.ValueType.(type) {
	case *arrow.BinaryType, *arrow.LargeBinaryType, *arrow.BinaryViewType:
		return arrow.BinaryTypes.Binary
	case *arrow.StringType, *arrow.LargeStringType, *arrow.StringViewType:
		return arrow.BinaryTypes.String
	case *arrow.DictionaryType, *arrow.BooleanType:
		return nil
	case arrow.FixedWidthDataType:
		if w := v.BitWidth(); w > 0 && w%8 == 0 {
			return v
		}
	}
	return nil
}

// denseSchema is s with each dictionary-encoded field that undict decodes
// of its plain type (denseType), or nil when s has none.
func denseSchema(s *arrow.Schema) *arrow.Schema {
	fs := s.Fields()
	found := false
	for i, f := range fs {
		if t := denseType(f.Type); t != nil {
			fs[i].Type, found = t, true
		}
	}
	if !found {
		return nil
	}
	md := s.Metadata()
	return arrow.NewSchema(fs, &md)
}

// undict returns rec with its dictionary-encoded columns decoded, of
// schema dense (denseSchema of rec's); the caller releases it. Every
// index must point into its dictionary, and the decoded columns of a
// batch must fit in lim (MaxArrowBuffer a column, MaxArrowLive in all):
// a small dictionary referenced by many rows would otherwise grow into
// any amount of memory.
func undict(rec arrow.Record, dense *arrow.Schema, lim Limits) (arrow.Record, error) {
	cols := make([]arrow.Array, rec.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	var live int64
	for i, c := range rec.Columns() {
		t := denseType(c.DataType())
		if t == nil {
			c.Retain()
			cols[i] = c
			continue
		}
		a, size, err := decodeDict(rec.ColumnName(i), c.(*array.Dictionary), t, lim)
		if err != nil {
			return nil, err
		}
		cols[i] = a
		if live += size; live > lim.MaxArrowLive {
			return nil, fmt.Errorf("%w: the dictionary-encoded columns of a record batch decode to over %d bytes",
				ErrLimit, lim.MaxArrowLive)
		}
	}
	return array.NewRecord(dense, cols, rec.NumRows()), nil
}

// decodeDict decodes the dictionary-encoded column d (named name) into a
// plain array of type t, and returns its size in bytes. A row is null
// when its index is, or the dictionary value it points to.
func decodeDict(name string, d *array.Dictionary, t arrow.DataType, lim Limits) (arrow.Array, int64, error) {
	vals := d.Dictionary()
	n := d.Len()
	for i := range n {
		if k := d.GetValueIndex(i); !d.IsNull(i) && (k < 0 || k >= vals.Len()) {
			return nil, 0, &CorruptError{Format: "Arrow IPC stream", Err: fmt.Errorf(
				"column %q row %d: dictionary index %d, past the %d values of its dictionary", name, i+1, k, vals.Len())}
		}
	}
	// valueOf is the dictionary value of row i, -1 for null.
	valueOf := func(i int) int {
		if d.IsNull(i) {
			return -1
		}
		if k := d.GetValueIndex(i); !vals.IsNull(k) {
			return k
		}
		return -1
	}
	tooBig := func(size int64) error {
		return fmt.Errorf("%w: dictionary-encoded column %q decodes to %d bytes in a record batch (limit %d)",
			ErrLimit, name, size, lim.MaxArrowBuffer)
	}
	switch v := vals.(type) {
	case interface{ Value(int) []byte }:
		if t.ID() != arrow.BINARY { // fixed_size_binary: below
			break
		}
		b := array.NewBinaryBuilder(memory.DefaultAllocator, arrow.BinaryTypes.Binary)
		defer b.Release()
		return gatherValues(n, valueOf, v.Value, b, lim.MaxArrowBuffer, tooBig)
	case interface{ Value(int) string }: // t is utf8
		b := array.NewStringBuilder(memory.DefaultAllocator)
		defer b.Release()
		return gatherValues(n, valueOf, v.Value, b, lim.MaxArrowBuffer, tooBig)
	}
	// Values of w bytes each (denseType): gathered from the dictionary's
	// value buffer, which checkData has checked holds all of them.
	w := t.(arrow.FixedWidthDataType).BitWidth() / 8
	size := int64(n) * int64(w)
	if size > lim.MaxArrowBuffer {
		return nil, 0, tooBig(size)
	}
	var src []byte
	if bufs := vals.Data().Buffers(); len(bufs) > 1 && bufs[1] != nil {
		src = bufs[1].Bytes()[vals.Data().Offset()*w:]
	}
	data := make([]byte, size)
	valid := make([]byte, bitutil.BytesForBits(int64(n)))
	nulls := 0
	for i := range n {
		if k := valueOf(i); k >= 0 {
			copy(data[i*w:(i+1)*w], src[k*w:(k+1)*w])
			bitutil.SetBit(valid, i)
		} else {
			nulls++
		}
	}
	ad := array.NewData(t, n, []*memory.Buffer{memory.NewBufferBytes(valid), memory.NewBufferBytes(data)}, nil, nulls, 0)
	defer ad.Release()
	return array.MakeFromData(ad), size, nil
}

// varBuilder is what gatherValues needs of a binary or string builder.
type varBuilder[T string | []byte] interface {
	Append(T)
	AppendNull()
	Reserve(int)
	ReserveData(int)
	NewArray() arrow.Array
}

// gatherValues builds the n rows of a dictionary-encoded column of
// variable-width values into b: row i is value(valueOf(i)), null where
// valueOf is -1. It refuses (tooBig) values past limit bytes in all before
// it allocates, and returns the array and its size in bytes (values and
// 4-byte offsets).
func gatherValues[T string | []byte](n int, valueOf func(int) int, value func(int) T, b varBuilder[T], limit int64,
	tooBig func(int64) error) (arrow.Array, int64, error) {
	var size int64
	for i := range n {
		if k := valueOf(i); k >= 0 {
			size += int64(len(value(k)))
		}
	}
	if size > limit {
		return nil, 0, tooBig(size)
	}
	b.Reserve(n)
	b.ReserveData(int(size))
	for i := range n {
		if k := valueOf(i); k >= 0 {
			b.Append(value(k))
		} else {
			b.AppendNull()
		}
	}
	return b.NewArray(), size + int64(n)*4, nil
}
