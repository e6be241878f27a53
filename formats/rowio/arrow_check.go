package rowio

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// arrow/go v17 reads a record batch's buffers as the stream lays them out
// and checks little of them: a binary or string array only has its last
// value offset compared with its data, a list array nothing, and arrays
// of fixed-width values not their lengths (and it has no ValidateFull
// for these types). Value(i) then slices with whatever offsets the stream
// gave: a crafted stream whose offsets decrease panicked inside arrow
// ("slice bounds out of range [10:0]"), which Recover reported as a
// failed decoder. checkColumns checks every column of a batch before any
// value is read, and names the column.

// checkColumns checks that the columns of rec (named as in its schema)
// hold the values their lengths, offsets and bitmaps say.
func checkColumns(rec arrow.Record) error {
	rows := int(rec.NumRows())
	for i, col := range rec.Columns() {
		name := rec.ColumnName(i)
		if col.Len() < rows {
			return fmt.Errorf("column %q: %d values in a batch of %d rows", name, col.Len(), rows)
		}
		if err := checkData(name, col.Data()); err != nil {
			return err
		}
	}
	return nil
}

// checkData checks one array's buffers and children (name: the column's
// path, for errors).
func checkData(name string, d arrow.ArrayData) error {
	off, n := d.Offset(), d.Len()
	if off < 0 || n < 0 {
		return fmt.Errorf("column %q: offset %d, length %d", name, off, n)
	}
	end := off + n // rows [off, end) of the buffers
	bufs := d.Buffers()
	buf := func(i int) []byte {
		if i < len(bufs) && bufs[i] != nil {
			return bufs[i].Bytes()
		}
		return nil
	}
	if d.NullN() != 0 && len(bufs) > 0 && bufs[0] != nil && len(buf(0)) < (end+7)/8 {
		return fmt.Errorf("column %q: a validity bitmap of %d bytes for %d rows", name, len(buf(0)), end)
	}
	switch t := d.DataType().(type) {
	case *arrow.BinaryType, *arrow.StringType:
		return checkOffsets(name, arrow.Int32Traits.CastFromBytes(buf(1)), off, n, len(buf(2)), "bytes of values")
	case *arrow.LargeBinaryType, *arrow.LargeStringType:
		return checkOffsets(name, arrow.Int64Traits.CastFromBytes(buf(1)), off, n, len(buf(2)), "bytes of values")
	case *arrow.BinaryViewType, *arrow.StringViewType:
		return checkViews(name, buf(1), bufs[min(2, len(bufs)):], d, off, end)
	case *arrow.ListType:
		kids := d.Children()
		if len(kids) != 1 {
			return fmt.Errorf("column %q: a list with %d child arrays", name, len(kids))
		}
		if err := checkOffsets(name, arrow.Int32Traits.CastFromBytes(buf(1)), off, n, kids[0].Len(), "list values"); err != nil {
			return err
		}
		return checkData(name+"."+t.ElemField().Name, kids[0])
	case *arrow.LargeListType:
		kids := d.Children()
		if len(kids) != 1 {
			return fmt.Errorf("column %q: a list with %d child arrays", name, len(kids))
		}
		if err := checkOffsets(name, arrow.Int64Traits.CastFromBytes(buf(1)), off, n, kids[0].Len(), "list values"); err != nil {
			return err
		}
		return checkData(name+"."+t.ElemField().Name, kids[0])
	case *arrow.StructType:
		kids := d.Children()
		if len(kids) != t.NumFields() {
			return fmt.Errorf("column %q: a struct of %d fields with %d child arrays", name, t.NumFields(), len(kids))
		}
		for k, kid := range kids {
			kname := name + "." + t.Field(k).Name
			if kid.Len() < end {
				return fmt.Errorf("column %q: %d values for %d rows", kname, kid.Len(), end)
			}
			if err := checkData(kname, kid); err != nil {
				return err
			}
		}
	case *arrow.FixedSizeBinaryType:
		if need := end * t.ByteWidth; len(buf(1)) < need {
			return fmt.Errorf("column %q: %d bytes of values for %d values of %d bytes", name, len(buf(1)), end, t.ByteWidth)
		}
	case *arrow.DictionaryType: // its indexes, and the values undict reads by them
		if need := end * t.IndexType.(arrow.FixedWidthDataType).BitWidth() / 8; n > 0 && len(buf(1)) < need {
			return fmt.Errorf("column %q: %d bytes of dictionary indexes for %d values", name, len(buf(1)), end)
		}
		if dict := d.Dictionary(); dict != nil {
			return checkData(name+" (its dictionary)", dict)
		}
	case arrow.FixedWidthDataType: // integers, floats, timestamps, booleans
		if need := (end*t.BitWidth() + 7) / 8; n > 0 && len(buf(1)) < need {
			return fmt.Errorf("column %q: %d bytes of values for %d values of %d bits", name, len(buf(1)), end, t.BitWidth())
		}
	}
	return nil
}

// checkOffsets checks the value offsets of rows [off, off+n) of an array
// (n+1 of them from off): they start at 0 or more, never decrease, and end
// within the size of what they index (size, in units).
func checkOffsets[O int32 | int64](name string, offs []O, off, n, size int, units string) error {
	if n == 0 {
		return nil
	}
	if len(offs) < off+n+1 {
		return fmt.Errorf("column %q: %d value offsets for %d rows", name, max(len(offs)-off, 0), n)
	}
	offs = offs[off : off+n+1]
	if offs[0] < 0 {
		return fmt.Errorf("column %q: the value offsets start at %d", name, offs[0])
	}
	for i := 1; i < len(offs); i++ {
		if offs[i] < offs[i-1] {
			return fmt.Errorf("column %q: the value offsets decrease at row %d (%d, then %d)", name, i, offs[i-1], offs[i])
		}
	}
	if last := offs[n]; int64(last) > int64(size) {
		return fmt.Errorf("column %q: the value offsets end at %d, past the %d %s", name, last, size, units)
	}
	return nil
}

// checkViews checks the view headers of rows [off, end) of a binary_view
// or utf8_view array (16 bytes each: a length, then the value inline when
// at most 12 bytes, else a prefix, a data buffer index and an offset into
// it): every non-null value must lie within its data buffer.
func checkViews(name string, views []byte, data []*memory.Buffer, d arrow.ArrayData, off, end int) error {
	if end == off {
		return nil
	}
	if len(views) < end*arrow.ViewHeaderSizeBytes {
		return fmt.Errorf("column %q: %d bytes of views for %d values", name, len(views), end)
	}
	hs := arrow.ViewHeaderTraits.CastFromBytes(views)
	var valid []byte
	if d.NullN() != 0 && len(d.Buffers()) > 0 && d.Buffers()[0] != nil {
		valid = d.Buffers()[0].Bytes()
	}
	for i := off; i < end; i++ {
		if valid != nil && !bitutil.BitIsSet(valid, i) {
			continue
		}
		h := &hs[i]
		n := h.Len()
		switch {
		case n < 0:
			return fmt.Errorf("column %q: row %d: a view of length %d", name, i-off+1, n)
		case h.IsInline():
			continue
		}
		k, at := int(h.BufferIndex()), int64(h.BufferOffset())
		if k < 0 || k >= len(data) || data[k] == nil {
			return fmt.Errorf("column %q: row %d: a view into data buffer %d of %d", name, i-off+1, k, len(data))
		}
		if at < 0 || at+int64(n) > int64(data[k].Len()) {
			return fmt.Errorf("column %q: row %d: a view of %d bytes at %d, past the %d bytes of data buffer %d", name, i-off+1, n, at, data[k].Len(), k)
		}
	}
	return nil
}
