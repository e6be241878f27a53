package rowio

import (
	"reflect"

	"github.com/parquet-go/parquet-go"
)

// ParquetRows reads rows of T with a parquet-go GenericReader, as its Read
// does, but with null read as nil in pointer fields of embedded structs.
//
// parquet-go v0.32.0 reaches a field of an embedded struct through its
// fieldByIndex, which allocates every nil pointer on the way, the field's
// own included: a null *string, *int64 or *bool of schema.Meta (embedded
// in Torrent) or schema.ResultMeta (in Result) came back as a pointer to
// "", 0 or false, a known value.
// The same fields at the top level of a struct (schema.Catalog) read
// right. For a row type with such fields, Read takes the rows as
// parquet-go's Read does (ReadRows, then Reconstruct) and sets each of
// them that the row holds as null back to nil.
type ParquetRows[T any] struct {
	r     *parquet.GenericReader[T]
	rows  []parquet.Row
	nulls []nullPointer
}

// nullPointer is a pointer field inside an embedded struct and the leaf
// column it is read from.
type nullPointer struct {
	index    []int // reflect field index path
	column   int   // leaf column index in the reader's schema
	maxLevel int   // the leaf's maximum definition level: below it, null
}

// NewParquetRows reads r's rows.
func NewParquetRows[T any](r *parquet.GenericReader[T]) *ParquetRows[T] {
	p := &ParquetRows[T]{r: r}
	s := r.Schema()
	for _, f := range planOf(reflect.TypeFor[T]()).fields {
		if !f.ptr || len(f.index) < 2 {
			continue
		}
		if leaf, ok := s.Lookup(f.name); ok {
			p.nulls = append(p.nulls, nullPointer{index: f.index, column: leaf.ColumnIndex, maxLevel: leaf.MaxDefinitionLevel})
		}
	}
	return p
}

// Read reads up to len(buf) rows into buf, which it clears first (a row
// is never read into another's memory); it returns io.EOF at the end.
func (p *ParquetRows[T]) Read(buf []T) (int, error) {
	clear(buf)
	if len(p.nulls) == 0 {
		return p.r.Read(buf)
	}
	if cap(p.rows) < len(buf) {
		p.rows = make([]parquet.Row, len(buf))
	}
	rows := p.rows[:len(buf)]
	s := p.r.Schema()
	total := 0
	for total < len(buf) {
		// ReadRows stops at a page boundary: go on, as Read does.
		n, err := p.r.ReadRows(rows[:len(buf)-total])
		for i, row := range rows[:n] {
			if rerr := s.Reconstruct(&buf[total+i], row); rerr != nil {
				return total + i, rerr
			}
			p.setNulls(&buf[total+i], row)
		}
		total += n
		if n == 0 || err != nil {
			return total, err
		}
	}
	return total, nil
}

// setNulls sets to nil the pointer fields of dst whose column is null in
// row.
func (p *ParquetRows[T]) setNulls(dst *T, row parquet.Row) {
	v := reflect.ValueOf(dst).Elem()
	row.Range(func(column int, values []parquet.Value) bool {
		for _, n := range p.nulls {
			if n.column == column && (len(values) == 0 || values[0].DefinitionLevel() < n.maxLevel) {
				v.FieldByIndex(n.index).SetZero()
			}
		}
		return true
	})
}
