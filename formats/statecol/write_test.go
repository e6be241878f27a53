package statecol

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// randomStates makes n sorted rows exercising every column: nulls and
// values in each optional one, v2 hashes, lists of 0-3 peers, and (with
// manyLeases) more distinct lease ids than a dictionary takes.
func randomStates(n int, seed uint64, manyLeases bool) []schema.State {
	r := rand.New(rand.NewPCG(seed, 7))
	rows := make([]schema.State, n)
	sources := []string{"dht_get_peers", "dht_announce_peer", "dht_sample_infohashes", "import"}
	for i := range rows {
		s := &rows[i]
		for j := range s.InfoHash {
			s.InfoHash[j] = byte(r.Uint32())
		}
		s.HashType = schema.HashV1
		if r.IntN(10) == 0 {
			s.HashType = schema.HashV2
			s.InfoHashV2 = make([]byte, 32)
			copy(s.InfoHashV2, s.InfoHash[:])
			s.InfoHashV2[31] = byte(i)
		}
		s.FirstSeen = 1_700_000_000_000 + r.Int64N(1e9)
		s.LastSeen = s.FirstSeen + r.Int64N(1e6)
		s.SeenCount = 1 + r.Int64N(1000)
		s.LastSource = sources[r.IntN(len(sources))]
		s.Activity = r.Float64() * 10
		s.MetadataStatus = []string{schema.StatusNew, schema.StatusFetched, schema.StatusFailed}[r.IntN(3)]
		s.Tier = []string{schema.TierHot, schema.TierCold}[r.IntN(2)]
		if r.IntN(2) == 0 {
			s.Attempts = int32(r.IntN(9))
			s.LastAttempt = s.LastSeen + 1
			s.LastFailure = []string{"no_peers", "timeout", "rejected"}[r.IntN(3)]
			s.BackoffStep = int32(r.IntN(6))
			s.BadMetadata = int32(r.IntN(2))
		}
		if r.IntN(3) > 0 {
			s.NextRetry = s.LastSeen + r.Int64N(1e8)
		}
		if r.IntN(4) == 0 {
			if manyLeases {
				s.LeaseID = fmt.Sprintf("L%016x", r.Uint64())
			} else {
				s.LeaseID = "L0123456789abcdef"
			}
			s.LeaseUntil = s.LastSeen + 3_600_000
		}
		if r.IntN(20) == 0 {
			s.Reactivated = s.LastSeen
		}
		for k := range r.IntN(4) * r.IntN(2) {
			s.AvoidPeers = append(s.AvoidPeers, fmt.Sprintf("127.0.0.%d:%d", k+1, 6881+r.IntN(100)))
		}
		for k := range r.IntN(9) * r.IntN(2) {
			s.Peers = append(s.Peers, fmt.Sprintf("10.0.%d.%d:%d", k, r.IntN(256), 1+r.IntN(65535)))
		}
		if r.IntN(5) > 0 { // else null: a row made before format 10
			s.FirstSource = []string{"dht_get_peers", "dht_sample_infohashes", "import"}[r.IntN(3)]
		}
		if s.LastFailure != "" && r.IntN(4) > 0 {
			s.LastFailureAt = s.LastSeen + r.Int64N(1e7)
		}
		if len(s.Peers) > 0 && r.IntN(4) > 0 { // else null: a row made before format 12
			s.PeersAt = s.LastSeen - r.Int64N(1e7)
		}
		if s.InfoHashV2 != nil && r.IntN(4) > 0 { // else null: a row made before format 12
			s.InfoHashV2Source = []string{"import", "metadata", "dht_get_peers"}[r.IntN(3)]
		}
	}
	slices.SortFunc(rows, func(a, b schema.State) int { return bytes.Compare(a.InfoHash[:], b.InfoHash[:]) })
	return rows
}

func TestWriteStateRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name       string
		n          int
		manyLeases bool
	}{
		{"empty", 0, false},
		{"one row", 1, false},
		{"small", 1000, false},
		{"plain strings past the dictionary limit", 3 * maxDictValues, true},
		{"several row groups", 3*1000 + 123, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func(n int) { rowGroupRows = n }(rowGroupRows)
			rowGroupRows = 1000
			rows := randomStates(tc.n, uint64(tc.n), tc.manyLeases)
			var buf bytes.Buffer
			if err := WriteState(&buf, rows); err != nil {
				t.Fatal(err)
			}
			checkReadsBack(t, buf.Bytes(), rows)
			// The same rows made on demand give the same file, byte for
			// byte (statistics included), in chunks that do not divide a
			// row group.
			var gen bytes.Buffer
			calls := 0
			if err := WriteStateFunc(&gen, len(rows), func(start int, dst []schema.State) {
				calls++
				copy(dst, rows[start:start+len(dst)])
			}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(gen.Bytes(), buf.Bytes()) {
				t.Fatalf("WriteStateFunc wrote %d bytes unlike WriteState's %d", gen.Len(), buf.Len())
			}
			if want := (tc.n%1000+genRows-1)/genRows + tc.n/1000*((1000+genRows-1)/genRows); calls != want {
				t.Fatalf("gen called %d times, want %d", calls, want)
			}
		})
	}
}

// checkReadsBack reads the state file data with statecol's reader and
// with parquet-go's row reader (which checks the schema and the levels
// its own way): both must give want.
func checkReadsBack(t *testing.T, data []byte, want []schema.State) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.parquet")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadStateFile(rowio.UnrecordedFile(path))
	if err != nil {
		t.Fatal(err)
	}
	compareStates(t, "statecol", got, want)
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if !parquet.EqualNodes(pf.Schema(), parquet.SchemaOf(schema.State{})) {
		t.Fatalf("schema differs from parquet-go's:\n%v\nwant\n%v", pf.Schema(), parquet.SchemaOf(schema.State{}))
	}
	back := make([]schema.State, len(want)+1)
	k, _ := parquet.NewGenericReader[schema.State](pf).Read(back)
	compareStates(t, "parquet-go", back[:k], want)
}

func compareStates(t *testing.T, reader string, got, want []schema.State) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: read %d rows, want %d", reader, len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if len(g.AvoidPeers) == 0 && len(w.AvoidPeers) == 0 {
			g.AvoidPeers, w.AvoidPeers = nil, nil
		}
		if len(g.Peers) == 0 && len(w.Peers) == 0 {
			g.Peers, w.Peers = nil, nil
		}
		if len(g.InfoHashV2) == 0 && len(w.InfoHashV2) == 0 {
			g.InfoHashV2, w.InfoHashV2 = nil, nil
		}
		if fmt.Sprint(g) != fmt.Sprint(w) {
			t.Fatalf("%s: row %d:\n got %+v\nwant %+v", reader, i, g, w)
		}
	}
}

// TestWriteStateStatistics checks the chunk statistics readers prune
// with: info_hash min/max and null counts.
func TestWriteStateStatistics(t *testing.T) {
	rows := randomStates(5000, 3, false)
	var buf bytes.Buffer
	if err := WriteState(&buf, rows); err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	cols := pf.Metadata().RowGroups[0].Columns
	st := cols[0].MetaData.Statistics
	if !bytes.Equal(st.MinValue, rows[0].InfoHash[:]) || !bytes.Equal(st.MaxValue, rows[len(rows)-1].InfoHash[:]) {
		t.Fatalf("info_hash min/max %x..%x, want %x..%x", st.MinValue, st.MaxValue, rows[0].InfoHash, rows[len(rows)-1].InfoHash)
	}
	nulls := int64(0)
	for i := range rows {
		if rows[i].NextRetry == 0 {
			nulls++
		}
	}
	l, _ := pf.Schema().Lookup("next_retry")
	if got := cols[l.ColumnIndex].MetaData.Statistics.NullCount; got != nulls {
		t.Fatalf("next_retry null count %d, want %d", got, nulls)
	}
}

// TestIntegerEncoding: the timestamp and integer columns are written
// DELTA_BINARY_PACKED and uncompressed, the others not (TestWriteStateRoundTrip
// reads them back with both readers).
func TestIntegerEncoding(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteState(&buf, randomStates(3000, 5, false)); err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	delta := map[string]bool{"first_seen": true, "last_seen": true, "last_attempt": true,
		"next_retry": true, "lease_until": true, "reactivated_at": true, "last_failure_at": true, "peers_at": true,
		"hash_type": true, "seen_count": true, "attempts": true, "backoff_step": true, "bad_metadata": true}
	for _, c := range pf.Metadata().RowGroups[0].Columns {
		m := c.MetaData
		name := m.PathInSchema[0]
		packed := slices.Contains(m.Encoding, format.DeltaBinaryPacked)
		if packed != delta[name] {
			t.Errorf("%s: encodings %v, DELTA_BINARY_PACKED expected: %v", name, m.Encoding, delta[name])
		}
		if delta[name] && m.Codec != format.Uncompressed {
			t.Errorf("%s: codec %v, want none", name, m.Codec)
		}
	}
}

func BenchmarkWriteState(b *testing.B) {
	rows := randomStates(1<<20, 1, false)
	for _, w := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{"statecol", func(out io.Writer) error { return WriteState(out, rows) }},
		{"parquet-go", func(out io.Writer) error {
			w := parquet.NewGenericWriter[schema.State](out, parquet.MaxRowsPerRowGroup(RowGroupRows),
				parquet.Compression(rowio.FastSnappy{}))
			if _, err := w.Write(rows); err != nil {
				return err
			}
			return w.Close()
		}},
	} {
		b.Run(w.name, func(b *testing.B) {
			for b.Loop() {
				if err := w.write(io.Discard); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(rows))*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
		})
	}
}

// TestSplice changes a few rows of files written by both writers (and so
// with both codecs): the spliced file reads back with the changes, every
// other row as it was, and the untouched row group's bytes unchanged.
func TestSplice(t *testing.T) {
	defer func(n int) { rowGroupRows = n }(rowGroupRows)
	rowGroupRows = 1000
	rows := randomStates(3500, 9, false)
	for _, writer := range []struct {
		name  string
		write func(io.Writer, []schema.State) error
	}{
		{"statecol", WriteState},
		{"parquet-go zstd", func(w io.Writer, rows []schema.State) error {
			pw := parquet.NewGenericWriter[schema.State](w, append(rowio.ParquetOptions(), parquet.MaxRowsPerRowGroup(1000))...)
			if _, err := pw.Write(rows); err != nil {
				return err
			}
			return pw.Close()
		}},
	} {
		for _, tc := range []struct {
			name   string
			change func(*schema.State)
		}{
			{"counts", func(s *schema.State) { s.SeenCount += 5; s.LastSeen += 1000; s.Activity += 1 }},
			{"reactivation", func(s *schema.State) { s.Tier, s.NextRetry, s.Reactivated = schema.TierHot, 42, 43 }},
			{"strings", func(s *schema.State) {
				s.LastSource, s.MetadataStatus = "dht_sample_infohashes", schema.StatusFailed
				if s.SeenCount%2 == 0 {
					s.LastSource = "a_source_no_row_had" // not in the chunk's dictionary yet
				}
			}},
			{"lists and v2", func(s *schema.State) { s.AvoidPeers = append(s.AvoidPeers, "127.0.0.9:9"); s.InfoHashV2 = nil }},
			{"peers", func(s *schema.State) { s.Peers = append([]string{"10.9.9.9:9"}, s.Peers...) }},
			{"provenance", func(s *schema.State) {
				s.FirstSource, s.LastFailure, s.LastFailureAt = "import", "timeout", s.LastSeen+7
			}},
			{"peers_at", func(s *schema.State) { s.Peers, s.PeersAt = append([]string{"10.9.9.8:8"}, s.Peers...), s.LastSeen+9 }},
			{"info_hash_v2_source", func(s *schema.State) {
				s.HashType, s.InfoHashV2, s.InfoHashV2Source = 2, append(s.InfoHash[:], make([]byte, 12)...), "metadata"
			}},
		} {
			t.Run(writer.name+"/"+tc.name, func(t *testing.T) {
				dir := t.TempDir()
				src := filepath.Join(dir, "src.parquet")
				f, err := os.Create(src)
				if err != nil {
					t.Fatal(err)
				}
				if err := writer.write(f, rows); err != nil {
					t.Fatal(err)
				}
				f.Close()
				want := slices.Clone(rows)
				changed := map[int64]bool{1001: true, 1500: true, 1999: true, 3400: true}
				for i := range changed {
					tc.change(&want[i])
				}
				in, err := Open(rowio.UnrecordedFile(src))
				if err != nil {
					t.Fatal(err)
				}
				defer in.Close()
				var out bytes.Buffer
				touchedGroups := 0
				err = Splice(&out, in, AllColumns, func(first, n int64) []int32 {
					var sel []int32
					for i := first; i < first+n; i++ {
						if changed[i] {
							sel = append(sel, int32(i-first))
						}
					}
					if len(sel) > 0 {
						touchedGroups++
					}
					return sel
				}, func(first int64, sel []int32, rs []schema.State) (Columns, error) {
					var mask Columns
					for k, r := range sel {
						// Each selected row decoded in full, the right one.
						compareStates(t, "selected row", rs[k:k+1], rows[first+int64(r):first+int64(r)+1])
						old := rs[k]
						tc.change(&rs[k])
						mask |= Changed(&old, &rs[k])
					}
					return mask, nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if touchedGroups != 2 {
					t.Fatalf("%d row groups touched, want 2", touchedGroups)
				}
				checkReadsBack(t, out.Bytes(), want)
				if writer.name == "statecol" {
					// Re-encoded columns (transcoded from the old pages or
					// laid out from rows) and copied ones alike: the file
					// WriteState writes for the changed rows, statistics and
					// all.
					var direct bytes.Buffer
					if err := WriteState(&direct, want); err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(out.Bytes(), direct.Bytes()) {
						t.Fatalf("the splice (%d bytes) differs from a fresh write (%d bytes)", out.Len(), direct.Len())
					}
				}
			})
		}
	}
}

// TestSpliceNeed: a splice that changes a column it did not read fails
// instead of writing zero values over it.
func TestSpliceNeed(t *testing.T) {
	rows := randomStates(100, 4, false)
	path := filepath.Join(t.TempDir(), "s.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteState(f, rows); err != nil {
		t.Fatal(err)
	}
	f.Close()
	in, err := Open(rowio.UnrecordedFile(path))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	need := ColumnsNamed("seen_count")
	err = Splice(io.Discard, in, need, func(int64, int64) []int32 { return []int32{0, 7} }, func(_ int64, _ []int32, rs []schema.State) (Columns, error) {
		old := rs[0]
		rs[0].SeenCount++
		rs[0].LastSeen = 5
		return Changed(&old, &rs[0]), nil
	})
	if err == nil {
		t.Fatal("a change to an unread column was written")
	}
}

// TestSpliceTruncatedSource: a source file whose chunks reach past its
// end (cut short after it was opened) fails the splice instead of
// writing a short chunk under the old sizes.
func TestSpliceTruncatedSource(t *testing.T) {
	in, path := openStateFile(t, randomStates(2000, 5, false))
	defer in.Close()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, st.Size()/2); err != nil {
		t.Fatal(err)
	}
	err = Splice(io.Discard, in, AllColumns, func(int64, int64) []int32 { return nil },
		func(int64, []int32, []schema.State) (Columns, error) { return 0, nil })
	if err == nil {
		t.Fatal("spliced a truncated file")
	}
}

// TestPlainInts checks that plainInts reads the same integers from an
// aligned buffer (seen as integers in place) and a misaligned one
// (decoded into the buffer).
func TestPlainInts(t *testing.T) {
	raw := make([]byte, 8*5+1)
	for i := range raw {
		raw[i] = byte(i*37 + 11)
	}
	for _, tc := range []struct {
		name string
		vals []byte
	}{
		{"aligned", raw[:40]},
		{"misaligned", raw[1:41]},
		{"empty", raw[:0]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf64 []int64
			for i, v := range plainInts(&buf64, tc.vals) {
				if want := int64(binary.LittleEndian.Uint64(tc.vals[8*i:])); v != want {
					t.Errorf("int64 %d: %d, want %d", i, v, want)
				}
			}
			var buf32 []int32
			got := plainInts(&buf32, tc.vals)
			if len(got) != len(tc.vals)/4 {
				t.Fatalf("%d int32s, want %d", len(got), len(tc.vals)/4)
			}
			for i, v := range got {
				if want := int32(binary.LittleEndian.Uint32(tc.vals[4*i:])); v != want {
					t.Errorf("int32 %d: %d, want %d", i, v, want)
				}
			}
		})
	}
}
