package statecol

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/schema"
)

// TestInfoHashStatistics: every row group's info_hash minimum and
// maximum are its least and greatest hash in byte order, however its
// rows are ordered, from WriteState (one fillRows a row group) and
// WriteStateFunc (one fillRows per genRows rows).
func TestInfoHashStatistics(t *testing.T) {
	defer func(n int) { rowGroupRows = n }(rowGroupRows)
	rowGroupRows = 1500
	shuffle := func(rows []schema.State) []schema.State {
		r := rand.New(rand.NewPCG(3, 4))
		r.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
		return rows
	}
	// prefixed gives every row the same first 8 bytes: every compare of
	// the words is a tie.
	prefixed := func(rows []schema.State) []schema.State {
		for i := range rows {
			copy(rows[i].InfoHash[:8], "\x7f\x00\x00\x00\xff\x00\x00\x01")
		}
		return rows
	}
	for _, tc := range []struct {
		name string
		rows []schema.State
	}{
		{"sorted", randomStates(4000, 21, false)},
		{"shuffled", shuffle(randomStates(4000, 22, false))},
		{"reversed", func() []schema.State { r := randomStates(4000, 23, false); slices.Reverse(r); return r }()},
		{"ties in the first 8 bytes", shuffle(prefixed(randomStates(4000, 24, false)))},
		{"one differs in its last byte", func() []schema.State {
			r := randomStates(2000, 25, false)
			for i := range r {
				r[i].InfoHash = r[0].InfoHash
			}
			r[1700].InfoHash[19]++
			r[900].InfoHash[19]--
			return r
		}()},
		{"one row", randomStates(1, 26, false)},
	} {
		for _, w := range []struct {
			name  string
			write func(*bytes.Buffer, []schema.State) error
		}{
			{"WriteState", func(b *bytes.Buffer, rows []schema.State) error { return WriteState(b, rows) }},
			{"WriteStateFunc", func(b *bytes.Buffer, rows []schema.State) error {
				return WriteStateFunc(b, len(rows), func(start int, dst []schema.State) { copy(dst, rows[start:]) })
			}},
		} {
			t.Run(tc.name+"/"+w.name, func(t *testing.T) {
				var buf bytes.Buffer
				if err := w.write(&buf, tc.rows); err != nil {
					t.Fatal(err)
				}
				pf, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
				if err != nil {
					t.Fatal(err)
				}
				for g, rg := range pf.Metadata().RowGroups {
					part := tc.rows[g*rowGroupRows : min(len(tc.rows), (g+1)*rowGroupRows)]
					lo, hi := part[0].InfoHash, part[0].InfoHash
					for _, s := range part {
						if bytes.Compare(s.InfoHash[:], lo[:]) < 0 {
							lo = s.InfoHash
						}
						if bytes.Compare(s.InfoHash[:], hi[:]) > 0 {
							hi = s.InfoHash
						}
					}
					st := rg.Columns[cInfoHash].MetaData.Statistics
					if !bytes.Equal(st.MinValue, lo[:]) || !bytes.Equal(st.MaxValue, hi[:]) {
						t.Errorf("row group %d: info_hash min/max %x..%x, want %x..%x", g, st.MinValue, st.MaxValue, lo, hi)
					}
				}
			})
		}
	}
}

// TestDictionaryOverflow: a string chunk that goes PLAIN past
// maxDictValues distinct values keeps every value after the switch,
// those equal to the last value it indexed included.
func TestDictionaryOverflow(t *testing.T) {
	for _, tc := range []struct {
		name   string
		repeat int // the row after the switch gets this row's lease id
	}{
		{"the last indexed value again", maxDictValues - 1},
		{"an earlier indexed value again", 7},
		{"the value that switched again", maxDictValues},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := randomStates(maxDictValues+50, 27, false)
			for i := range rows {
				rows[i].LeaseID, rows[i].LeaseUntil = fmt.Sprintf("L%05d", i), rows[i].LastSeen+1
			}
			rows[maxDictValues+1].LeaseID = rows[tc.repeat].LeaseID
			var buf bytes.Buffer
			if err := WriteState(&buf, rows); err != nil {
				t.Fatal(err)
			}
			checkReadsBack(t, buf.Bytes(), rows)
		})
	}
}
