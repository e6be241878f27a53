package statecol

import (
	"bytes"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// listColumns are the list columns TestSpliceLists changes.
var listColumns = ColumnsNamed("avoid_peers", "peers")

// endpoint is a peer endpoint of about size bytes (at least a dozen),
// distinct for each i.
func endpoint(i, size int) string {
	host := fmt.Sprintf("127.%d.%d.%d", i>>16&255, i>>8&255, i&255)
	if pad := size - len(host) - 6; pad > 0 {
		host = "h" + strings.Repeat("x", pad) + ".example" // a long host name
	}
	return fmt.Sprintf("%s:%d", host, 1024+i%60000)
}

// cycleList turns a list into the next of empty, one endpoint, several
// of several lengths, back to empty (i is the row).
func cycleList(i int, l []string) []string {
	switch {
	case len(l) == 0:
		return []string{endpoint(i, 12)}
	case len(l) == 1:
		return []string{endpoint(i, 9), endpoint(i+1, 40), endpoint(i+2, 300), endpoint(i+3, 14)}
	default:
		return nil
	}
}

// changeLists changes both list columns of s as cycleList does, peers
// one step ahead so that the two differ.
func changeLists(i int, s *schema.State) {
	s.AvoidPeers = cycleList(i, s.AvoidPeers)
	s.Peers = cycleList(i+7, cycleList(i+5, s.Peers))
}

// TestSpliceLists splices files whose avoid_peers and peers lists vary
// (empty, one endpoint, several of several lengths), changing lists in
// rows anywhere in the row groups, and compares the result byte for byte
// with WriteState of the expected rows (levels, null counts and page
// layout included). From a parquet-go file (several pages a chunk) it
// compares the rows read back and the re-encoded chunks' statistics.
func TestSpliceLists(t *testing.T) {
	defer func(n int) { rowGroupRows = n }(rowGroupRows)
	appendPeer := func(i int, s *schema.State) { s.AvoidPeers = append(s.AvoidPeers, endpoint(i, 15+i%30)) }
	for _, tc := range []struct {
		name    string
		mask    Columns
		touched func(r, g int) bool // g: rows a row group
		change  func(r int, s *schema.State)
	}{
		{"none changed", listColumns, func(r, g int) bool { return false }, changeLists},
		{"selected, unchanged", listColumns, func(r, g int) bool { return r%97 == 3 }, func(int, *schema.State) {}},
		{"every seventh", listColumns, func(r, g int) bool { return r%7 == 0 }, changeLists},
		{"first and last of row groups", listColumns, func(r, g int) bool { return r%g == 0 || r%g == g-1 || r == g*7/2-1 }, changeLists},
		{"adjacent", listColumns, func(r, g int) bool { return r%g >= 5 && r%g < 9 }, changeLists},
		{"runs", listColumns, func(r, g int) bool { return r%g >= g/10 && r%g < g*2/5 }, changeLists},
		{"all", listColumns, func(r, g int) bool { return true }, changeLists},
		{"all to empty", listColumns, func(r, g int) bool { return true }, func(_ int, s *schema.State) {
			s.AvoidPeers, s.Peers = nil, nil
		}},
		{"empty to several", listColumns, func(r, g int) bool { return r%3 == 1 }, func(r int, s *schema.State) {
			if len(s.AvoidPeers) == 0 {
				s.AvoidPeers = cycleList(r, cycleList(r, nil))
			}
			if len(s.Peers) == 0 {
				s.Peers = []string{endpoint(r, 200)}
			}
		}},
		{"avoid_peers appended, with retry columns", listColumns&^ColumnsNamed("peers") | transcodeColumns,
			func(r, g int) bool { return r%11 == 2 }, func(r int, s *schema.State) {
				toggle(r, s)
				appendPeer(r, s)
			}},
	} {
		for _, src := range []struct {
			name  string
			pages int // parquet-go's page buffer size; 0 for WriteState
		}{
			{"statecol", 0},
			{"parquet-go pages", 2048},
		} {
			t.Run(tc.name+"/"+src.name, func(t *testing.T) {
				g := 1000
				rowGroupRows = g
				touched := func(r int) bool { return tc.touched(r, g) }
				rows := listRows(g)
				var in bytes.Buffer
				if src.pages == 0 {
					if err := WriteState(&in, rows); err != nil {
						t.Fatal(err)
					}
				} else {
					writeParquetGo(t, &in, rows, src.pages, false)
				}
				want := append([]schema.State(nil), rows...)
				for i := range want {
					if touched(i) {
						want[i].AvoidPeers = append([]string(nil), want[i].AvoidPeers...)
						tc.change(i, &want[i])
					}
				}
				out := spliceColumns(t, in.Bytes(), tc.mask, touched, tc.change)
				checkSplice(t, out, want, src.pages == 0, tc.mask, g, touched)
			})
		}
	}
}

// listRows are transcodeRows(g) with a run of empty lists in the third
// row group and one of long lists in the fourth.
func listRows(g int) []schema.State {
	rows := transcodeRows(g, false)
	for i := 2 * g; i < 2*g+g/2; i++ {
		rows[i].AvoidPeers, rows[i].Peers = nil, nil
	}
	for i := 3 * g; i < 3*g+g/4; i++ {
		rows[i].AvoidPeers = cycleList(i, cycleList(i, nil))
		rows[i].Peers = append(rows[i].Peers, endpoint(i, 60))
	}
	return rows
}

// TestTranscodeListsFallBack checks that a list chunk transcodeList does
// not take (here: dictionary-encoded, which parquet-go writes and
// statecol's readers do not read) is left, reset, to the rows path.
func TestTranscodeListsFallBack(t *testing.T) {
	var in bytes.Buffer
	writeDictLists(t, &in, listRows(1000))
	f, err := Open(rowio.UnrecordedFile(writeTemp(t, in.Bytes())))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if m := f.pf.Metadata().RowGroups[0].Columns[cAvoidPeers].MetaData; m.DictionaryPageOffset == 0 {
		t.Fatalf("avoid_peers of the source's first row group is not dictionary-encoded (%v)", m.Encoding)
	}
	sw, _, err := beginState(io.Discard, f.NumRows())
	if err != nil {
		t.Fatal(err)
	}
	defer sw.release()
	rg := f.RowGroups()[0]
	n := int(rg.NumRows())
	sw.fillBegin(n, listMask)
	for _, k := range []int{cAvoidPeers, cPeers} { // as a page laid out before a slow one leaves them
		sw.cols[k].strList([]string{"127.0.0.1:1"})
	}
	st := make([]schema.State, 1)
	rest, err := sw.transcodeLists(f, rg, listMask, n, []int32{3}, st)
	if err != nil || rest != listMask {
		t.Fatalf("transcodeLists: rest %b, %v; want %b, no error", rest, err, listMask)
	}
	for _, k := range []int{cAvoidPeers, cPeers} {
		if c := &sw.cols[k]; c.entries != 0 || c.nulls != 0 || len(c.rep)+len(c.def)+len(c.vals) != 0 {
			t.Errorf("%s not reset: %d entries, %d nulls, %d levels, %d bytes", stateColumnNames[k], c.entries, c.nulls, len(c.def), len(c.vals))
		}
	}
}

// TestSpliceListsBack splices lists to empty and back again: the second
// splice gives the original file, byte for byte.
func TestSpliceListsBack(t *testing.T) {
	defer func(n int) { rowGroupRows = n }(rowGroupRows)
	rowGroupRows = 500
	rows := transcodeRows(500, false)
	var in bytes.Buffer
	if err := WriteState(&in, rows); err != nil {
		t.Fatal(err)
	}
	touched := func(r int) bool { return r%5 == 0 || r%500 == 499 }
	empty := spliceColumns(t, in.Bytes(), listColumns, touched, func(_ int, s *schema.State) { s.AvoidPeers, s.Peers = nil, nil })
	if bytes.Equal(empty, in.Bytes()) {
		t.Fatal("emptying lists left the file as it was")
	}
	back := spliceColumns(t, empty, listColumns, touched, func(r int, s *schema.State) {
		s.AvoidPeers, s.Peers = rows[r].AvoidPeers, rows[r].Peers
	})
	if !bytes.Equal(back, in.Bytes()) {
		t.Fatalf("spliced back (%d bytes), the file differs from the original (%d bytes)", len(back), in.Len())
	}
}

// writeDictLists writes rows with parquet-go in row groups of 1000 and
// pages of about 2 KB, the list columns' strings dictionary-encoded: a
// State with parquet-element:",dict" on its lists.
func writeDictLists(t *testing.T, w io.Writer, rows []schema.State) {
	t.Helper()
	st := reflect.TypeFor[schema.State]()
	fields := make([]reflect.StructField, st.NumField())
	for i := range fields {
		fields[i] = st.Field(i)
		if tag := fields[i].Tag.Get("parquet"); strings.HasSuffix(tag, ",list") {
			fields[i].Tag = reflect.StructTag(fmt.Sprintf(`parquet:%q parquet-element:",dict"`, tag))
		}
	}
	typ := reflect.StructOf(fields)
	pw := parquet.NewWriter(w, append(rowio.ParquetOptions(), parquet.SchemaOf(reflect.New(typ).Interface()),
		parquet.MaxRowsPerRowGroup(1000), parquet.PageBufferSize(2048))...)
	for i := range rows {
		if err := pw.Write(reflect.ValueOf(rows[i]).Convert(typ).Interface()); err != nil {
			t.Fatal(err)
		}
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
}
