package merge

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/inputdir"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// resultNames are the top-level columns merge reads of a results file.
var resultNames = rowio.Names(parquet.SchemaOf(schema.Result{}))

// hiveError refuses input in, whose top-level columns are cols (any
// case), when a folder above it is named after a results column it lacks
// (inputdir.HiveError: DuckDB's COPY ... PARTITION_BY (lease_id) moves
// the column into the folder's name). Such a file was read without it:
// an optional column (lease_id, detail, served_by) silently null, a
// required one (outcome) refused as "not a results file". A spool (stdin,
// a pipe, a leftover) is not checked: its folder is merge's inbox; nor is
// an input whose columns are not known (nil: not an Arrow stream at all).
func hiveError(in input, cols []string) error {
	if in.inbox || in.spooled != "" || cols == nil {
		return nil
	}
	has := func(c string) bool {
		return slices.ContainsFunc(cols, func(s string) bool { return strings.EqualFold(s, c) })
	}
	if err := inputdir.HiveError("merge", in.path, resultNames, has); err != nil {
		return exitcode.BadInput(fmt.Errorf("merge: %s: %w", in.name, &rowio.SchemaError{Columns: cols, Err: err}))
	}
	return nil
}

// arrowColumns are the top-level columns of an Arrow stream that
// rowio opened as r, or refused with err (a SchemaError lists them); nil
// when it tells none.
func arrowColumns[T any](r *rowio.Reader[T], err error) []string {
	if err == nil {
		var cols []string
		for _, f := range r.ArrowSchema().Fields() {
			cols = append(cols, f.Name)
		}
		return cols
	}
	if se, ok := errors.AsType[*rowio.SchemaError](err); ok {
		return se.Columns
	}
	return nil
}
