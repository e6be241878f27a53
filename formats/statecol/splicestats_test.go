package statecol

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/schema"
)

// TestSpliceStatistics: a spliced INT64 column's statistics are its exact
// minimum and maximum, whether the change moves a value past the old
// bounds or takes away the row that held one (readers such as DataFusion
// answer min() and max() from them); the columns the splice did not
// change keep theirs.
func TestSpliceStatistics(t *testing.T) {
	defer func(n int) { rowGroupRows = n }(rowGroupRows)
	rowGroupRows = 1000
	rows := randomStates(2500, 11, false)
	slices.SortFunc(rows, func(a, b schema.State) int { return bytes.Compare(a.InfoHash[:], b.InfoHash[:]) })
	lowest := func(lo, hi int) int { // the row of rows[lo:hi] with the smallest last_seen
		m := lo
		for i := lo; i < hi; i++ {
			if rows[i].LastSeen < rows[m].LastSeen {
				m = i
			}
		}
		return m
	}
	for _, tc := range []struct {
		name   string
		change func(st *schema.State)
	}{
		{"past the maximum", func(st *schema.State) { st.LastSeen += 1 << 40; st.SeenCount = 1 << 50 }},
		{"the minimum's row moves inside", func(st *schema.State) { st.LastSeen += 3; st.SeenCount++ }},
		{"below the minimum", func(st *schema.State) { st.LastSeen = 5; st.SeenCount = -7 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, _ := openStateFile(t, rows)
			defer src.Close()
			want := slices.Clone(rows)
			touched := map[int64]bool{}
			for g := 0; g < 3; g++ {
				lo, hi := g*1000, min(len(rows), (g+1)*1000)
				touched[int64(lowest(lo, hi))] = true
				touched[int64(lo+17)] = true
			}
			var out bytes.Buffer
			err := Splice(&out, src, ColumnsNamed("last_seen", "seen_count"), func(first, n int64) []int32 {
				var sel []int32
				for r := first; r < first+n; r++ {
					if touched[r] {
						sel = append(sel, int32(r-first))
					}
				}
				return sel
			}, func(first int64, sel []int32, st []schema.State) (Columns, error) {
				for k := range sel {
					tc.change(&st[k])
					w := &want[first+int64(sel[k])]
					w.LastSeen, w.SeenCount = st[k].LastSeen, st[k].SeenCount
				}
				return ColumnsNamed("last_seen", "seen_count"), nil
			})
			if err != nil {
				t.Fatal(err)
			}
			pf, err := parquet.OpenFile(bytes.NewReader(out.Bytes()), int64(out.Len()))
			if err != nil {
				t.Fatal(err)
			}
			for g, rg := range pf.Metadata().RowGroups {
				part := want[g*1000 : min(len(want), (g+1)*1000)]
				for _, col := range []struct {
					name string
					val  func(*schema.State) int64
				}{
					{"last_seen", func(s *schema.State) int64 { return s.LastSeen }},
					{"seen_count", func(s *schema.State) int64 { return s.SeenCount }},
					{"first_seen", func(s *schema.State) int64 { return s.FirstSeen }}, // copied
				} {
					l, _ := pf.Schema().Lookup(col.name)
					st := rg.Columns[l.ColumnIndex].MetaData.Statistics
					if len(st.MinValue) != 8 || len(st.MaxValue) != 8 {
						t.Fatalf("row group %d %s: no statistics", g, col.name)
					}
					lo, hi := int64(binary.LittleEndian.Uint64(st.MinValue)), int64(binary.LittleEndian.Uint64(st.MaxValue))
					vmin, vmax := col.val(&part[0]), col.val(&part[0])
					for i := range part {
						vmin, vmax = min(vmin, col.val(&part[i])), max(vmax, col.val(&part[i]))
					}
					if lo != vmin || hi != vmax {
						t.Errorf("row group %d %s: statistics %d..%d, want the values' %d..%d", g, col.name, lo, hi, vmin, vmax)
					}
				}
			}
		})
	}
}
