package duckcheck

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/textenc"
)

// TestCSVStringListsReadBack: every element of a csv export's list of
// strings (avoid_peers, peers) reads back exactly through the read_csv
// call `export --describe state` ends with (VARCHAR[]), however awkward.
// Written as JSON they did not: DuckDB's cast does not undo JSON's
// escapes, so "a&b:1" (JSON's "a\u0026b:1") came back "au0026b:1", a tab
// (\t) "t", a newline "n".
func TestCSVStringListsReadBack(t *testing.T) {
	needCommands(t, "export")
	elems := []struct{ name, s string }{
		{"ampersand", "a&b:1"}, {"angles", "<x>"}, {"comma", "a,b"}, {"double quotes", `"q"`},
		{"single quotes", "'s'"}, {"brackets", "[1]"}, {"backslash", `back\slash`}, {"lone backslash", `\`},
		{"escaped quote", `\"`}, {"tab", "t\tab"}, {"CR", "c\rr"}, {"newline", "n\nl"},
		{"non-ASCII", "é ✓ 日本"}, {"empty", ""}, {"spaces", " sp "}, {"NULL", "NULL"},
		{"control", "x\x01y"}, {"curly", "{a: 1}"}, {"JSON", `["a", "b"]`},
	}
	var states []schema.State
	want := map[string][2][]string{} // by info_hash: avoid_peers, peers
	var all []string
	for i, e := range elems {
		h := schema.Hash{byte(i + 1)}
		st := schema.State{InfoHash: h, HashType: schema.HashV1, LastSource: "import", MetadataStatus: "new",
			AvoidPeers: []string{e.s, "127.0.0.1:1"}, Peers: []string{e.s}}
		states = append(states, st)
		want[schema.Hex(h)] = [2][]string{st.AvoidPeers, st.Peers}
		all = append(all, e.s)
	}
	every := schema.State{InfoHash: schema.Hash{0xee}, HashType: schema.HashV1, LastSource: "import", MetadataStatus: "new",
		AvoidPeers: all, Peers: []string{}}
	states = append(states, every)
	want[schema.Hex(every.InfoHash)] = [2][]string{all, nil}

	path := filepath.Join(t.TempDir(), "state.csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	e := textenc.NewCSV[schema.State](f, "info_bytes") // as export --format csv writes the state
	if err := e.Write(states); err != nil {
		t.Fatal(err)
	}
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	csvCall, _ := describeReaders(t, "state", path)
	// Each element as <hex>, so that the comparison sees every byte.
	hexed := func(col string) string {
		return "array_to_string(list_transform(" + col + ", x -> '<' || hex(x) || '>'), ',')"
	}
	_, rows, err := Rows(duck(t), "SELECT info_hash, "+hexed("avoid_peers")+", "+hexed("peers")+" FROM "+csvCall)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(states) {
		t.Fatalf("%d rows read, want %d", len(rows), len(states))
	}
	asHex := func(l []string) string {
		var parts []string
		for _, s := range l {
			parts = append(parts, "<"+strings.ToUpper(hex.EncodeToString([]byte(s)))+">")
		}
		return strings.Join(parts, ",")
	}
	names := map[string]string{schema.Hex(every.InfoHash): "every element"}
	for i, e := range elems {
		names[schema.Hex(schema.Hash{byte(i + 1)})] = e.name
	}
	for _, r := range rows {
		w, ok := want[r[0]]
		if !ok {
			t.Fatalf("row of info_hash %s, not written", r[0])
		}
		t.Run(names[r[0]], func(t *testing.T) {
			if r[1] != asHex(w[0]) || r[2] != asHex(w[1]) {
				t.Errorf("avoid_peers %s, peers %s (each element's hex)\nwant %s, %s", r[1], r[2], asHex(w[0]), asHex(w[1]))
			}
		})
	}
}
