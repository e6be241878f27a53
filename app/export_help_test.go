package app

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/schema"
)

// columnNames lists the top-level columns of row type T.
func columnNames[T any]() []string {
	var out []string
	for _, f := range parquet.SchemaOf(new(T)).Fields() {
		out = append(out, f.Name())
	}
	return out
}

// TestCatalogColumnsAsDocumented: export --help and README name exactly
// the state and torrent columns that the catalog leaves out (they called
// it "state joined with metadata", which it is not: a selection), and
// the columns the text formats leave out.
func TestCatalogColumnsAsDocumented(t *testing.T) {
	catalog := columnNames[schema.Catalog]()
	var left []string
	for _, c := range append(columnNames[schema.State](), columnNames[schema.Torrent]()...) {
		if !slices.Contains(catalog, c) && !slices.Contains(left, c) {
			left = append(left, c)
		}
	}
	if len(left) == 0 {
		t.Fatal("the catalog has every column: this test checks nothing")
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{
		"export --help": strings.Join(strings.Fields(helpOf(t, "export")), " "),
		"README":        strings.ReplaceAll(strings.Join(strings.Fields(string(readme)), " "), "`", ""),
	}
	for name, doc := range docs {
		// The sentence that lists them: the state's columns but ..., then the torrent's but ...
		_, rest, ok := strings.Cut(doc, "the state's columns but ")
		list, _, ok2 := strings.Cut(rest, ")")
		if !ok || !ok2 {
			t.Errorf("%s does not list the state columns the catalog leaves out", name)
			continue
		}
		for _, c := range left {
			if !strings.Contains(list, c) {
				t.Errorf("%s does not say the catalog leaves out %s: %q", name, c, list)
			}
		}
		for _, w := range strings.FieldsFunc(list, func(r rune) bool { return !(r == '_' || r >= 'a' && r <= 'z') }) {
			if strings.Contains(w, "_") && !slices.Contains(left, w) {
				t.Errorf("%s says the catalog leaves out %s, which it has (or no table has)", name, w)
			}
		}
		for _, want := range []string{"info_bytes (the raw info dictionary)", "name_raw"} {
			if !strings.Contains(doc, want) {
				t.Errorf("%s does not say which columns the text formats leave out (%q)", name, want)
			}
		}
	}
}
