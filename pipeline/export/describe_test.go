package export

import (
	"bytes"
	"encoding/csv"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/internal/goldentest"
)

// TestDescribeCoversEveryColumn: every table export offers is described,
// and its meanings name exactly the columns of the row type it is
// described by, each with a meaning: a column added to a table without
// one (or one removed and still described) fails here.
func TestDescribeCoversEveryColumn(t *testing.T) {
	if got, want := slices.Sorted(maps.Keys(tableDocs)), slices.Sorted(slices.Values(Tables)); !slices.Equal(got, want) {
		t.Fatalf("--describe documents tables %v, export writes %v", got, want)
	}
	for _, table := range Tables {
		doc := tableDocs[table]
		var cols []string
		for _, f := range parquet.SchemaOf(doc.row).Fields() {
			cols = append(cols, f.Name())
			if strings.TrimSpace(doc.meanings[f.Name()]) == "" {
				t.Errorf("table %s: column %s has no meaning in describe.go's tableDocs", table, f.Name())
			}
		}
		for name := range doc.meanings {
			if !slices.Contains(cols, name) {
				t.Errorf("table %s: describe.go gives a meaning to %s, which the table lacks (columns %v)", table, name, cols)
			}
		}
	}
}

// TestDescribeIsWhatExportWrites: the columns --describe lists for a
// table, with their types and nullability, are those of the Parquet file
// export writes of it, and a CSV export's header is them less what
// --describe says csv leaves out.
func TestDescribeIsWhatExportWrites(t *testing.T) {
	data, _ := fixture(t)
	for _, table := range Tables {
		t.Run(table, func(t *testing.T) {
			want := describedColumns(t, table)
			b := export(t, data, table, "parquet", nil)
			f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatalf("export --table %s: %v", table, err)
			}
			var got []string
			for _, c := range f.Schema().Fields() {
				typ := schema.TypeName(c)
				if c.Optional() {
					typ += ", null"
				}
				got = append(got, c.Name()+"  "+typ)
			}
			if !slices.Equal(got, want) {
				t.Errorf("export --table %s writes columns\n%s\n--describe lists\n%s", table, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			header, err := csv.NewReader(bytes.NewReader(export(t, data, table, "csv", nil))).Read()
			if err != nil {
				t.Fatalf("export --table %s --format csv: %v", table, err)
			}
			var text []string
			for _, c := range want {
				name, _, _ := strings.Cut(c, "  ")
				if !slices.Contains(omitted["csv"], name) {
					text = append(text, name)
				}
			}
			if !slices.Equal(header, text) {
				t.Errorf("export --table %s --format csv has columns %v, --describe says %v", table, header, text)
			}
		})
	}
}

// describedColumns are the "NAME  TYPE" lines of Describe(table).
func describedColumns(t *testing.T, table string) []string {
	t.Helper()
	var out bytes.Buffer
	if err := Describe(&out, table); err != nil {
		t.Fatal(err)
	}
	var cols []string
	_, body, _ := strings.Cut(out.String(), "\n\n") // past what a row is
	for _, l := range strings.Split(body, "\n") {
		if l == "" {
			break
		}
		if !strings.HasPrefix(l, " ") {
			cols = append(cols, l)
		}
	}
	return cols
}

// TestDescribeGolden: what --describe prints of each table
// (go test ./pipeline/export -run TestDescribeGolden -update rewrites
// testdata/describe/), and that an unknown table is bad input.
func TestDescribeGolden(t *testing.T) {
	for _, table := range append(slices.Clone(Tables), "all") {
		t.Run(table, func(t *testing.T) {
			var out bytes.Buffer
			if err := Describe(&out, table); err != nil {
				t.Fatal(err)
			}
			goldentest.Check(t, filepath.Join("testdata", "describe", table+".txt"), out.Bytes(), *update)
		})
	}
	err := Describe(&bytes.Buffer{}, "states")
	if code := exitcode.Of(err); code != exitcode.Usage || err == nil || !strings.Contains(err.Error(), `--describe "states"`) {
		t.Errorf("--describe states: %v (exit %d), want bad input naming it", err, code)
	}
}
