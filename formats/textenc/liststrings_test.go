package textenc

import (
	"bytes"
	"encoding/csv"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestCSVStringListCells: a csv cell of a list of strings (avoid_peers)
// is DuckDB's list syntax, every element in double quotes with only " and
// \ escaped (by \), as DuckDB's VARCHAR[] cast reads it back exactly
// (tools/duckcheck TestCSVStringListsReadBack); JSON's escapes of & < >,
// tab, CR, newline and control characters it read as other characters.
func TestCSVStringListCells(t *testing.T) {
	for _, tt := range []struct {
		name string
		list []string
		want string // the cell, as encoding/csv reads it
	}{
		{"none", []string{}, `[]`},
		{"endpoints", []string{"127.0.0.1:1", "[::1]:2"}, `["127.0.0.1:1","[::1]:2"]`},
		{"HTML characters", []string{"a&b<c>"}, `["a&b<c>"]`},
		{"quote and backslash", []string{`say "hi"`, `C:\x`}, `["say \"hi\"","C:\\x"]`},
		{"tab, CR, newline, control", []string{"a\tb\rc\nd\x01"}, "[\"a\tb\rc\nd\x01\"]"},
		{"non-ASCII", []string{"é ✓"}, `["é ✓"]`},
		{"empty element", []string{""}, `[""]`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			e := NewCSV[schema.State](&b)
			if err := e.Write([]schema.State{{AvoidPeers: tt.list}}); err != nil {
				t.Fatal(err)
			}
			r := csv.NewReader(&b)
			recs, err := r.ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			col := -1
			for i, name := range recs[0] {
				if name == "avoid_peers" {
					col = i
				}
			}
			if len(recs) != 2 || col < 0 {
				t.Fatalf("%d records, avoid_peers at %d", len(recs), col)
			}
			if got := recs[1][col]; got != tt.want {
				t.Errorf("cell %q, want %q", got, tt.want)
			}
		})
	}
}
