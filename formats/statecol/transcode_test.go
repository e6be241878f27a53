package statecol

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// transcodeColumns are the columns TestSpliceTranscode changes: the
// optional INT64s, optional strings, INT32s and required strings that a
// splice lays out again from their old pages.
var transcodeColumns = ColumnsNamed("attempts", "last_attempt", "last_failure", "next_retry", "lease_id",
	"lease_until", "backoff_step", "bad_metadata", "reactivated_at", "metadata_status", "tier")

// toggle turns each optional column of s from null to a value or back
// and changes its integer and string columns (i is s's row).
func toggle(i int, s *schema.State) {
	at := func(v *int64, set int64) {
		if *v == 0 {
			*v = set
		} else {
			*v = 0
		}
	}
	at(&s.LastAttempt, 1_700_000_100_000+int64(i))
	at(&s.NextRetry, 1_700_000_200_000+int64(i))
	at(&s.LeaseUntil, 1_700_000_300_000+int64(i))
	at(&s.Reactivated, 1_700_000_400_000+int64(i))
	if s.LastFailure == "" {
		s.LastFailure = []string{"timeout", "a_failure_no_row_had"}[i%2]
	} else {
		s.LastFailure = ""
	}
	if s.LeaseID == "" {
		s.LeaseID = fmt.Sprintf("L-new-%d", i%3)
	} else {
		s.LeaseID = ""
	}
	s.Attempts = (s.Attempts + 1) % 9
	s.BackoffStep = int32(i % 7)
	s.BadMetadata = 1 - s.BadMetadata
	s.MetadataStatus = schema.StatusFailed
	s.Tier = []string{schema.TierHot, schema.TierCold}[i%2]
}

// transcodeRows are 3.5 row groups of g rows for TestSpliceTranscode,
// with nulls and values mixed in runs: the second row group has no lease
// in any row, the third a failure in every row. With manyLeases 90% of
// the rows have a lease id of their own.
func transcodeRows(g int, manyLeases bool) []schema.State {
	rows := randomStates(g*7/2, 13, manyLeases)
	if manyLeases {
		for i := range rows {
			if i%10 != 0 {
				rows[i].LeaseID, rows[i].LeaseUntil = fmt.Sprintf("L%08x", i), rows[i].LastSeen+9
			}
		}
	}
	for i := g; i < 2*g; i++ {
		rows[i].LeaseID, rows[i].LeaseUntil, rows[i].Reactivated = "", 0, 0
	}
	for i := 2 * g; i < 3*g; i++ {
		if rows[i].LastFailure == "" {
			rows[i].LastFailure, rows[i].LastAttempt = "rejected", rows[i].LastSeen+5
		}
	}
	for i := 3*g + g/10; i < 3*g+g/5; i++ { // a run of nulls and one of values
		rows[i].NextRetry, rows[i+g/10].NextRetry = 0, rows[i].LastSeen+7
	}
	return rows
}

// TestSpliceTranscode splices files whose optional INT64, optional
// string and INT32 columns hold nulls and values mixed, changing rows
// from null to a value and back, and compares the result byte for byte
// with WriteState of the expected rows (statistics, null counts and
// dictionary ids included). From a parquet-go file (several pages a
// chunk, other encodings) it compares the rows read back and the
// re-encoded chunks' statistics.
func TestSpliceTranscode(t *testing.T) {
	defer func(n int) { rowGroupRows = n }(rowGroupRows)
	for _, tc := range []struct {
		name    string
		touched func(r, g int) bool // g: rows a row group
		change  func(r int, s *schema.State)
	}{
		{"none changed", func(r, g int) bool { return false }, toggle},
		{"selected, unchanged", func(r, g int) bool { return r%97 == 3 }, func(int, *schema.State) {}},
		{"every seventh", func(r, g int) bool { return r%7 == 0 }, toggle},
		{"first and last of row groups", func(r, g int) bool { return r%g == 0 || r%g == g-1 || r == g*7/2-1 }, toggle},
		{"runs", func(r, g int) bool { return r%g >= g/10 && r%g < g*2/5 }, toggle},
		{"all", func(r, g int) bool { return true }, toggle},
		{"all to null", func(r, g int) bool { return true }, func(_ int, s *schema.State) {
			s.LastAttempt, s.NextRetry, s.LeaseUntil, s.Reactivated, s.LastFailure, s.LeaseID = 0, 0, 0, 0, "", ""
		}},
		{"new bounds", func(r, g int) bool { return r%(g/2) == g/4 }, func(r int, s *schema.State) {
			toggle(r, s)
			s.Attempts, s.BackoffStep, s.LastAttempt, s.NextRetry = 1<<30, -5, 1, 1<<62
		}},
	} {
		for _, src := range []struct {
			name       string
			groupRows  int
			manyLeases bool // lease_id past the dictionary's maxDictValues
			pages      int  // parquet-go's page buffer size; 0 for WriteState
			zeros      bool // some nulls written as present 0s and ""s
		}{
			{"statecol", 1000, false, 0, false},
			{"statecol plain leases", 5000, true, 0, false},
			{"parquet-go pages", 1000, false, 2048, false},
			{"parquet-go present zeros", 1000, false, 2048, true},
		} {
			t.Run(tc.name+"/"+src.name, func(t *testing.T) {
				g := src.groupRows
				rowGroupRows = g
				touched := func(r int) bool { return tc.touched(r, g) }
				rows := transcodeRows(g, src.manyLeases)
				var in bytes.Buffer
				if src.pages == 0 {
					if err := WriteState(&in, rows); err != nil {
						t.Fatal(err)
					}
				} else {
					writeParquetGo(t, &in, rows, src.pages, src.zeros)
				}
				if src.manyLeases {
					pf, err := parquet.OpenFile(bytes.NewReader(in.Bytes()), int64(in.Len()))
					if err != nil {
						t.Fatal(err)
					}
					if m := pf.Metadata().RowGroups[0].Columns[cLeaseID].MetaData; m.DictionaryPageOffset != 0 {
						t.Fatalf("lease_id of the source's first row group is dictionary-encoded (%v), want PLAIN", m.Encoding)
					}
				}
				want := append([]schema.State(nil), rows...)
				for i := range want {
					if touched(i) {
						tc.change(i, &want[i])
					}
				}
				out := spliceBytes(t, in.Bytes(), touched, tc.change)
				checkSplice(t, out, want, src.pages == 0, transcodeColumns, g, touched)
			})
		}
	}
}

// writeParquetGo writes rows with parquet-go in row groups of 1000 and
// pages of about pageSize bytes; with zeros, the nulls of last_attempt
// and last_failure in every third row are written as present 0s and ""s,
// which readers take as nulls and WriteState writes as nulls. opts are
// more writer options.
func writeParquetGo(t *testing.T, w io.Writer, rows []schema.State, pageSize int, zeros bool, opts ...parquet.WriterOption) {
	t.Helper()
	sch := parquet.SchemaOf(schema.State{})
	pw := parquet.NewWriter(w, append(append(rowio.ParquetOptions(), sch,
		parquet.MaxRowsPerRowGroup(1000), parquet.PageBufferSize(pageSize)), opts...)...)
	for i := range rows {
		row := sch.Deconstruct(nil, &rows[i])
		for k, v := range row {
			if !zeros || i%3 != 0 || !v.IsNull() {
				continue
			}
			switch v.Column() {
			case cLastAttempt:
				row[k] = parquet.Int64Value(0).Level(v.RepetitionLevel(), 1, cLastAttempt)
			case cLastFailure:
				row[k] = parquet.ByteArrayValue(nil).Level(v.RepetitionLevel(), 1, cLastFailure)
			}
		}
		if _, err := pw.WriteRows([]parquet.Row{row}); err != nil {
			t.Fatal(err)
		}
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
}

// spliceBytes splices the state file data, changing rows touched(r) with
// change into the transcodeColumns, and returns the file written.
func spliceBytes(t *testing.T, data []byte, touched func(int) bool, change func(int, *schema.State)) []byte {
	t.Helper()
	return spliceColumns(t, data, transcodeColumns, touched, change)
}

// spliceColumns is spliceBytes returning mask as the changed columns.
func spliceColumns(t *testing.T, data []byte, mask Columns, touched func(int) bool, change func(int, *schema.State)) []byte {
	t.Helper()
	f, err := Open(rowio.UnrecordedFile(writeTemp(t, data)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	err = Splice(&out, f, AllColumns, func(first, n int64) []int32 {
		var sel []int32
		for r := first; r < first+n; r++ {
			if touched(int(r)) {
				sel = append(sel, int32(r-first))
			}
		}
		return sel
	}, func(first int64, sel []int32, st []schema.State) (Columns, error) {
		for k, r := range sel {
			change(int(first)+int(r), &st[k])
		}
		return mask, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// writeTemp writes data to a file in a test's temporary directory and
// returns its path.
func writeTemp(t *testing.T, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "src.parquet")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// compareStatistics checks that the chunks of columns cols of the files
// got and want have the same statistics (min, max, null count) in the
// row groups g for which spliced(g) (the others were copied).
func compareStatistics(t *testing.T, got, want []byte, cols Columns, spliced func(g int) bool) {
	t.Helper()
	open := func(b []byte) *parquet.File {
		pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		return pf
	}
	g, w := open(got).Metadata().RowGroups, open(want).Metadata().RowGroups
	if len(g) != len(w) {
		t.Fatalf("%d row groups, want %d", len(g), len(w))
	}
	for i := range w {
		for k := range numStateColumns {
			if cols&(1<<k) == 0 || !spliced(i) {
				continue
			}
			gs, ws := g[i].Columns[k].MetaData.Statistics, w[i].Columns[k].MetaData.Statistics
			if gs.NullCount != ws.NullCount || !bytes.Equal(gs.MinValue, ws.MinValue) || !bytes.Equal(gs.MaxValue, ws.MaxValue) {
				t.Errorf("row group %d, %s: statistics %+v, want %+v", i, stateColumnNames[k], gs, ws)
			}
		}
	}
}

// checkSplice checks the spliced file out against want: its rows read
// back, and it equals WriteState's file of want byte for byte when the
// source was laid out by WriteState (ours), else (another writer's
// pages) its statistics of cols match, for the row groups of g rows
// with a touched row.
func checkSplice(t *testing.T, out []byte, want []schema.State, ours bool, cols Columns, g int, touched func(int) bool) {
	t.Helper()
	checkReadsBack(t, out, want)
	var direct bytes.Buffer
	if err := WriteState(&direct, want); err != nil {
		t.Fatal(err)
	}
	if ours {
		if !bytes.Equal(out, direct.Bytes()) {
			t.Fatalf("the splice (%d bytes) differs from a fresh write (%d bytes)", len(out), direct.Len())
		}
		return
	}
	compareStatistics(t, out, direct.Bytes(), cols, func(k int) bool {
		for r := k * g; r < min(len(want), (k+1)*g); r++ {
			if touched(r) {
				return true
			}
		}
		return false
	})
}
