package rowio

import (
	"encoding/binary"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// OpenParquetFold is OpenParquet for an input another tool wrote, whose
// column names a reader such as DuckDB matches case-insensitively: a
// top-level column named as one of names but for case (INFO_HASH for
// info_hash) is read under that name, when it is the only column to be.
// Two columns that differ only in case and match one of names (one may be
// that very name) are an error wrapping ErrSchema, naming both: which one
// is meant cannot be told. The file is not changed: parquet-go reads its
// data as it is, and a footer with the names as read.
func OpenParquetFold(r io.ReaderAt, size int64, read *parquet.Schema, names []string, lim Limits) (*parquet.File, error) {
	pf, _, err := openParquetFile(r, size, read, lim, false, names)
	return pf, err
}

// Names lists the top-level column names of s, for OpenParquetFold.
func Names(s *parquet.Schema) []string {
	var out []string
	for _, f := range s.Fields() {
		out = append(out, f.Name())
	}
	return out
}

// foldNames renames in md the top-level columns that match one of names
// but for case (see OpenParquetFold); renamed reports whether any was.
func foldNames(md *format.FileMetaData, names []string) (renamed bool, err error) {
	top := topColumns(md.Schema)
	for _, want := range names {
		match := -1
		for _, i := range top {
			if !strings.EqualFold(md.Schema[i].Name, want) {
				continue
			}
			if match >= 0 {
				return false, fmt.Errorf("%w: columns %q and %q differ only in case: which is %s cannot be told",
					ErrSchema, md.Schema[match].Name, md.Schema[i].Name, want)
			}
			match = i
		}
		if match < 0 || md.Schema[match].Name == want {
			continue
		}
		old := md.Schema[match].Name
		md.Schema[match].Name, renamed = want, true
		for g := range md.RowGroups {
			for c := range md.RowGroups[g].Columns {
				if p := md.RowGroups[g].Columns[c].MetaData.PathInSchema; len(p) > 0 && p[0] == old {
					p[0] = want
				}
			}
		}
	}
	return renamed, nil
}

// topColumns is the indexes in schema (depth-first, the root first) of
// the root's children. checkMetadata has checked the tree's shape.
func topColumns(schema []format.SchemaElement) []int {
	var out []int
	i := 1
	for k := 0; k < int(schema[0].NumChildren.V) && i < len(schema); k++ {
		out = append(out, i)
		for left := 1; left > 0 && i < len(schema); i++ {
			left += int(schema[i].NumChildren.V) - 1
		}
	}
	return out
}

// refooted is a Parquet file read with another footer: its bytes up to
// dataEnd (the magic and the column chunks), then tail (the footer, its
// length and the magic).
type refooted struct {
	r       io.ReaderAt
	dataEnd int64
	tail    []byte
}

// refoot returns r (of data up to dataEnd) with md as its footer, and
// the size of the result.
func refoot(r io.ReaderAt, dataEnd int64, md *format.FileMetaData) (io.ReaderAt, int64, error) {
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), md)
	if err != nil {
		return nil, 0, corrupt("footer: %v", err)
	}
	tail := binary.LittleEndian.AppendUint32(footer, uint32(len(footer)))
	tail = append(tail, "PAR1"...)
	return &refooted{r: r, dataEnd: dataEnd, tail: tail}, dataEnd + int64(len(tail)), nil
}

func (f *refooted) ReadAt(p []byte, off int64) (n int, err error) {
	if off < f.dataEnd {
		k := int(min(int64(len(p)), f.dataEnd-off))
		if n, err = f.r.ReadAt(p[:k], off); n < k || n == len(p) {
			return n, err
		}
		off += int64(n)
	}
	at := off - f.dataEnd
	if at >= int64(len(f.tail)) {
		return n, io.EOF
	}
	n += copy(p[n:], f.tail[at:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// FieldIndex is the index of the field of s named name, matched as
// OpenParquetFold matches a column: the one field whose name is name but
// for case; -1 when there is none. Fields that differ only in case and
// match name are an error wrapping ErrSchema, naming two of them (fields
// of the very same name are not: the first is read, as before).
func FieldIndex(s *arrow.Schema, name string) (int, error) {
	match := -1
	for i, f := range s.Fields() {
		switch {
		case !strings.EqualFold(f.Name, name):
		case match < 0:
			match = i
		case s.Field(match).Name != f.Name:
			return -1, fmt.Errorf("%w: columns %q and %q differ only in case: which is %s cannot be told",
				ErrSchema, s.Field(match).Name, f.Name, name)
		}
	}
	return match, nil
}

// NestedKind says what top-level column name of s is when it does not
// hold one value a row: "a LIST", "a MAP" or "a STRUCT" when it is not a
// leaf (Lookup finds no column of that path), "REPEATED" for a repeated
// leaf (which Lookup finds, and parquet-go reads as its first value,
// dropping the rest); "" when there is no such column, or it is a plain
// leaf.
func NestedKind(s *parquet.Schema, name string) string {
	for _, f := range s.Fields() {
		if f.Name() != name {
			continue
		}
		if f.Leaf() {
			if f.Repeated() {
				return "REPEATED"
			}
			continue
		}
		var lt format.LogicalTypeValue
		if l := f.Type().LogicalType(); l != nil {
			lt = l.Value
		}
		ct := f.Type().ConvertedType()
		switch {
		case isType[*format.ListType](lt), ct != nil && *ct == deprecated.List:
			return "a LIST"
		case isType[*format.MapType](lt), ct != nil && (*ct == deprecated.Map || *ct == deprecated.MapKeyValue):
			return "a MAP"
		}
		return "a STRUCT"
	}
	return ""
}

func isType[T any](v any) bool { _, ok := v.(T); return ok }
