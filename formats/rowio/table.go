package rowio

import (
	"fmt"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// CheckTable checks a file of one of infohash's own tables (a dataset's
// state, torrents, peers, leases or ledger) against want, the schema its
// writer gives that table: every leaf column of want must be in the file
// with the same physical type (FIXED_LEN_BYTE_ARRAY: the same length) and
// the same definition and repetition levels, except the top-level columns
// named in lacks, which may be missing whole (a file of an older dataset
// format that predates them). Every row group's column chunks must name
// the schema's leaf columns, in order, with their types.
//
// Unlike CheckSchema, made for inputs from elsewhere, it lets no optional
// column go missing: one bit flipped in a column's name in the footer
// would make that column read as nulls or zeros for every row, silently,
// and the next commit would write those zeros back with a valid checksum.
// A problem is a CorruptError of the given format ("Parquet", or a
// caller's more precise name).
func CheckTable(pf *parquet.File, want *parquet.Schema, format string, lacks ...string) error {
	if err := checkTable(pf, want, lacks); err != nil {
		return &CorruptError{Format: format, Err: err}
	}
	return nil
}

func checkTable(pf *parquet.File, want *parquet.Schema, lacks []string) error {
	got := pf.Schema()
	for _, path := range want.Columns() {
		wl, _ := want.Lookup(path...)
		gl, ok := got.Lookup(path...)
		if !ok {
			if slices.Contains(lacks, path[0]) && !hasField(got, path[0]) {
				continue
			}
			return missingColumn(path, want, got)
		}
		wt, gt := wl.Node.Type(), gl.Node.Type()
		switch {
		case wt.Kind() != gt.Kind():
			return fmt.Errorf("column %q is %s, want %s", joinPath(path), gt.Kind(), wt.Kind())
		case wt.Kind() == parquet.FixedLenByteArray && wt.Length() != gt.Length():
			return fmt.Errorf("column %q is FIXED_LEN_BYTE_ARRAY(%d), want (%d)", joinPath(path), gt.Length(), wt.Length())
		case wl.MaxDefinitionLevel != gl.MaxDefinitionLevel || wl.MaxRepetitionLevel != gl.MaxRepetitionLevel:
			return fmt.Errorf("column %q has definition and repetition levels %d and %d, want %d and %d",
				joinPath(path), gl.MaxDefinitionLevel, gl.MaxRepetitionLevel, wl.MaxDefinitionLevel, wl.MaxRepetitionLevel)
		}
	}
	// parquet-go takes a column's type from its logical type where it has
	// one (INT(8) is INT32): the physical type the schema element
	// declares, which other readers (DuckDB) go by, is checked here.
	leaves := got.Columns()
	types := leafTypes(pf.Metadata().Schema)
	if len(types) != len(leaves) {
		return fmt.Errorf("the schema has %d leaf elements for %d columns", len(types), len(leaves))
	}
	for k, path := range leaves {
		if wl, ok := want.Lookup(path...); ok && types[k] != wl.Node.Type().Kind() {
			return fmt.Errorf("column %q is %s, want %s", joinPath(path), types[k], wl.Node.Type().Kind())
		}
	}
	for i, rg := range pf.Metadata().RowGroups {
		if len(rg.Columns) != len(leaves) {
			return fmt.Errorf("row group %d has %d column chunks for %d columns", i, len(rg.Columns), len(leaves))
		}
		for k, cc := range rg.Columns {
			switch md := &cc.MetaData; {
			case !slices.Equal(md.PathInSchema, leaves[k]):
				return fmt.Errorf("row group %d: column chunk %d is %q, the schema's column %d is %q",
					i, k, joinPath(md.PathInSchema), k, joinPath(leaves[k]))
			case parquet.Kind(md.Type) != types[k]:
				return fmt.Errorf("row group %d: column %q is %s in its chunk, %s in the schema",
					i, joinPath(leaves[k]), parquet.Kind(md.Type), types[k])
			}
		}
	}
	return nil
}

// leafTypes returns the physical types the leaf elements of schema (a
// footer's, depth first) declare, in column order.
func leafTypes(schema []format.SchemaElement) []parquet.Kind {
	var out []parquet.Kind
	for i, el := range schema {
		if i == 0 || (el.NumChildren.Valid && el.NumChildren.V > 0) {
			continue // the root, or a group
		}
		out = append(out, parquet.Kind(el.Type.V))
	}
	return out
}

func hasField(s *parquet.Schema, name string) bool {
	return slices.ContainsFunc(s.Fields(), func(f parquet.Field) bool { return f.Name() == name })
}

// missingColumn is the error for want's column at path missing from got,
// naming got's top-level columns that want does not have: where a
// flipped bit renamed a column, that is its new name.
func missingColumn(path []string, want, got *parquet.Schema) error {
	var unknown []string
	for _, f := range got.Fields() {
		if !hasField(want, f.Name()) {
			unknown = append(unknown, fmt.Sprintf("%q", f.Name()))
		}
	}
	if len(unknown) == 0 {
		return fmt.Errorf("no column %q", joinPath(path))
	}
	return fmt.Errorf("no column %q (unknown columns in the file: %s)", joinPath(path), strings.Join(unknown, ", "))
}
