package schema

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// readmeState returns README's "State columns" table: each column's type
// as the table gives it, and whether it says the column is nullable (its
// type cell ends in ", null", or its meaning begins "always null").
func readmeState(t *testing.T) (order []string, types map[string]string, nullable map[string]bool) {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "### State columns\n\n")
	if !ok {
		t.Fatal(`README has no "State columns" table`)
	}
	types, nullable = map[string]string{}, map[string]bool{}
	for _, line := range strings.Split(rest, "\n")[2:] { // past the header and its rule
		if !strings.HasPrefix(line, "| ") {
			break
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) < 3 {
			t.Fatalf("README's state table: row %q has no name, type and meaning", line)
		}
		names, typs := strings.Split(cells[0], ", "), splitTypes(cells[1])
		null := typs[len(typs)-1] == "null" || strings.HasPrefix(cells[2], "always null")
		typs = slices.DeleteFunc(typs, func(s string) bool { return s == "null" })
		if len(typs) == 1 {
			typs = slices.Repeat(typs, len(names))
		}
		if len(typs) != len(names) {
			t.Fatalf("README's state table: row %q gives %d types for %d columns", line, len(typs), len(names))
		}
		for i, n := range names {
			order = append(order, n)
			types[n], nullable[n] = typs[i], null
		}
	}
	return order, types, nullable
}

// splitTypes splits a type cell at its commas outside parentheses:
// "TIMESTAMP(ms, UTC)" is one type, "TIMESTAMP, STRING, null" three.
func splitTypes(cell string) []string {
	var out []string
	depth, from := 0, 0
	for i, c := range cell {
		switch c {
		case '(', '<':
			depth++
		case ')', '>':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(cell[from:i]))
				from = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(cell[from:]))
}

// TestReadmeStateTable: README's "State columns" table names every
// column of the state files, each once, with the type and nullability
// the files have (a bare TIMESTAMP there is the TIMESTAMP(ms, UTC) of
// first_seen's row). last_attempt, last_failure and next_retry, optional
// in the files, were given no null.
func TestReadmeStateTable(t *testing.T) {
	order, types, nullable := readmeState(t)
	s := parquet.SchemaOf(State{})
	var cols []string
	for _, f := range s.Fields() {
		cols = append(cols, f.Name())
		want, ok := types[f.Name()]
		if !ok {
			t.Errorf("README's state table lacks column %s", f.Name())
			continue
		}
		if want == "TIMESTAMP" {
			want = "TIMESTAMP(ms, UTC)"
		}
		if got := TypeName(f); got != want {
			t.Errorf("column %s: the files store %s, README says %s", f.Name(), got, want)
		}
		if f.Optional() != nullable[f.Name()] {
			t.Errorf("column %s: nullable %v in the files, %v in README", f.Name(), f.Optional(), nullable[f.Name()])
		}
	}
	slices.Sort(order)
	slices.Sort(cols)
	if !slices.Equal(order, cols) {
		t.Errorf("README's state table lists %v, the files hold %v", order, cols)
	}
}
