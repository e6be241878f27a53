package textenc

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

func TestCSVAndJSONL(t *testing.T) {
	rows := []schema.Torrent{
		{InfoHash: schema.Hash{0xab, 0xcd}, HashType: 1, FetchedAt: 1700000000123, ServedBy: "127.0.0.1:1", MetadataSize: 9,
			Meta: schema.Meta{Name: new("a, \"quoted\"\nname"), NameRaw: []byte{0xff, 'a'}, Files: []schema.File{{Path: "d/f", PathRaw: []byte("d/f"), Length: 3}}, InfoBytes: []byte("x")}},
		{InfoHash: schema.Hash{1}, HashType: 1, FetchedAt: 1700000000000},
	}
	var c bytes.Buffer
	e := NewCSV[schema.Torrent](&c, "info_bytes")
	if err := e.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&c).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head := strings.Join(recs[0], ",")
	if !strings.HasPrefix(head, "info_hash,hash_type,fetched_at,served_by,metadata_size,name,name_raw") || strings.Contains(head, "info_bytes") {
		t.Fatalf("header %q", head)
	}
	r1 := recs[1]
	tests := []struct{ col, want string }{
		{"info_hash", "abcd" + strings.Repeat("0", 36)},
		{"fetched_at", "2023-11-14T22:13:20.123Z"},
		{"name", "a, \"quoted\"\nname"},
		{"name_raw", "ff61"},
		{"files", `[{"path":"d/f","path_raw":"642f66","length":3}]`},
	}
	for _, tt := range tests {
		i := indexOf(recs[0], tt.col)
		if i < 0 || r1[i] != tt.want {
			t.Errorf("%s = %q, want %q", tt.col, r1[i], tt.want)
		}
	}
	if i := indexOf(recs[0], "served_by"); recs[2][i] != "" {
		t.Errorf("null served_by rendered as %q", recs[2][i])
	}

	var j bytes.Buffer
	je := NewJSONL[schema.Torrent](&j)
	je.Write(rows[1:])
	var m map[string]any
	if err := json.Unmarshal(j.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if m["served_by"] != nil || m["info_hash"] != "01"+strings.Repeat("0", 38) || m["private"] != false {
		t.Fatalf("jsonl %s", j.String())
	}
	if !strings.HasPrefix(j.String(), `{"info_hash":`) {
		t.Fatalf("columns out of schema order: %s", j.String())
	}
}

func TestEmptyCSVHasHeader(t *testing.T) {
	var c bytes.Buffer
	e := NewCSV[schema.State](&c)
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.String(), "info_hash,") || strings.Count(c.String(), "\n") != 1 {
		t.Fatalf("empty csv %q", c.String())
	}
}

func indexOf(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}

// TestKnownEmptyIsNotNull: a torrent's known empty name (and raw name)
// and size of 0 are a quoted empty CSV cell, "", and 0, and in JSON ""
// and 0; unknown ones are an empty cell and null.
func TestKnownEmptyIsNotNull(t *testing.T) {
	rows := []schema.Catalog{
		{Name: new(""), NameRaw: []byte{}, TotalSize: new(int64(0)), FileCount: new(int32(0))},
		{},
	}
	tests := []struct {
		name string
		enc  func(*bytes.Buffer) *Encoder[schema.Catalog]
		want []string // the rows' name, name_raw, total_size, file_count
	}{
		{"csv", func(b *bytes.Buffer) *Encoder[schema.Catalog] { return NewCSV[schema.Catalog](b) },
			[]string{`"","",0,0`, `,,,`}},
		{"jsonl", func(b *bytes.Buffer) *Encoder[schema.Catalog] { return NewJSONL[schema.Catalog](b) },
			[]string{`"name":"","name_raw":"","name_utf8_valid":null,"total_size":0,"piece_length":null,"file_count":0`,
				`"name":null,"name_raw":null,"name_utf8_valid":null,"total_size":null,"piece_length":null,"file_count":null`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			e := tt.enc(&b)
			if err := e.Write(rows); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(b.String()), "\n")
			if tt.name == "csv" {
				head := strings.Split(lines[0], ",")
				lines = lines[1:]
				for i, l := range lines {
					cells := strings.Split(l, ",")
					var got []string
					for _, c := range []string{"name", "name_raw", "total_size", "file_count"} {
						got = append(got, cells[indexOf(head, c)])
					}
					lines[i] = strings.Join(got, ",")
				}
			}
			for i, w := range tt.want {
				if !strings.Contains(lines[i], w) {
					t.Errorf("row %d: %s, want it to hold %s", i, lines[i], w)
				}
			}
		})
	}
}

// TestCSVKeepsValuesExact: CSV cells are the values as they are, so that
// DuckDB and other CSV readers get back what the dataset holds. Names
// from peers that a spreadsheet would run as a formula (a leading =, +,
// - or @; README: import a CSV as text) are not defused with a quote or
// an apostrophe, and NUL and other control characters, U+2028 and
// U+FEFF stay; only the quoting of encoding/csv applies.
func TestCSVKeepsValuesExact(t *testing.T) {
	for _, tt := range []struct{ name, cell string }{
		{`=HYPERLINK("http://x","y")`, `"=HYPERLINK(""http://x"",""y"")"`},
		{"=1+1", "=1+1"},
		{"+1-2", "+1-2"},
		{"-cmd", "-cmd"},
		{"@SUM(A1)", "@SUM(A1)"},
		{"\tlead tab", "\"\tlead tab\""},
		{"nul\x00x\x1f\u2028\ufeff", "nul\x00x\x1f\u2028\ufeff"},
		{"cr\ronly", "\"cr\ronly\""},
	} {
		var b bytes.Buffer
		e := NewCSV[schema.Torrent](&b, "info_bytes")
		if err := e.Write([]schema.Torrent{{HashType: 1, Meta: schema.Meta{Name: new(tt.name), NameRaw: []byte(tt.name)}}}); err != nil {
			t.Fatal(err)
		}
		line := strings.SplitN(b.String(), "\n", 2)[1]
		if !strings.Contains(line, ","+tt.cell+",") {
			t.Errorf("name %q: row %q lacks the cell %q", tt.name, line, tt.cell)
		}
		recs, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
		if err != nil {
			t.Fatalf("name %q: %v", tt.name, err)
		}
		if got := recs[1][indexOf(recs[0], "name")]; got != tt.name {
			t.Errorf("name %q read back as %q", tt.name, got)
		}
	}
}
