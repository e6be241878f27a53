package merge

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/statecol"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestArchiveScanMatchesRules: archiveScan, which reads as few columns
// of a row group as it can (none but tier when the statistics of
// last_seen and attempts say no row crosses the archive thresholds),
// finds the rows, and counts the cold rows and hits, that testing every
// row whole with runner.archives finds (scanReference, what it did
// before). Each case writes its rows as merge does (statecol, one row
// group), and as another writer does (parquet-go: dictionary strings,
// row groups of 16 rows) with and without statistics of last_seen and
// attempts; skip says whether the statistics of the one row group let
// the scan skip it. Some rows of each case have results (hits, or
// released rows only). Given a limit below its counts, the scan stops
// once past it (the splice is off), the changes untouched.
func TestArchiveScanMatchesRules(t *testing.T) {
	now := t0 + 300*day
	p := schedule.Default() // 6 attempts, unseen for 90 days; never tried, unseen for 90 days
	newOff := p
	newOff.Archive.NewUnseen = 0 // never-tried hashes stay hot
	fetchedToo := newOff
	fetchedToo.Archive.FetchedUnseen = schedule.Duration(30 * schedule.Day)
	failed := func(attempts int32, unseen int64) func(*schema.State) {
		return func(st *schema.State) {
			st.MetadataStatus, st.LastFailure, st.Attempts, st.LastSeen = schema.StatusFailed, schema.OutcomeNoPeers, attempts, now-unseen
		}
	}
	fetched := func(attempts int32, unseen int64) func(*schema.State) {
		return func(st *schema.State) {
			st.MetadataStatus, st.Attempts, st.LastSeen = schema.StatusFetched, attempts, now-unseen
		}
	}
	cold := func(f func(*schema.State)) func(*schema.State) {
		return func(st *schema.State) { f(st); st.Tier = schema.TierCold }
	}
	leased := func(f func(*schema.State), until int64) func(*schema.State) {
		return func(st *schema.State) { f(st); st.LeaseID, st.LeaseUntil = "L1", until }
	}
	seen := func(unseen int64) func(*schema.State) { return func(st *schema.State) { st.LastSeen = now - unseen } }
	for _, c := range []struct {
		name string
		p    schedule.Policy
		rows []func(*schema.State) // row i's state, cycled over 64 rows
		skip bool                  // the statistics rule the row group out
		want int                   // rows archived (in the 64)
	}{
		{"nothing unseen long enough", p, []func(*schema.State){failed(8, 89*day), fetched(8, 10*day), seen(day)}, true, 0},
		{"rows just at the thresholds", p, []func(*schema.State){failed(5, 89*day), seen(day), failed(6, 90*day)}, false, 21},
		{"old rows, none failed", newOff, []func(*schema.State){seen(200 * day), fetched(8, 200*day), seen(day)}, false, 0},
		{"old rows, too few attempts for any", newOff, []func(*schema.State){seen(200 * day), fetched(1, 200*day)}, true, 0},
		{"old failed rows, too few attempts", newOff, []func(*schema.State){failed(5, 200*day), seen(300 * day)}, true, 0},
		// archive.new_unseen: a never-tried hash has no attempt, so a row
		// group of them must not be skipped for its attempts' statistics.
		{"old never-tried rows, no attempts", p, []func(*schema.State){seen(200 * day), seen(day)}, false, 30},
		{"never-tried rows just at new_unseen", p, []func(*schema.State){seen(90*day - 1), seen(90 * day)}, false, 31},
		{"old never-tried and failed rows, few attempts", p, []func(*schema.State){failed(5, 200*day), seen(300 * day)}, false, 31},
		{"never-tried rows not unseen long enough", p, []func(*schema.State){seen(90*day - 1), failed(8, 89*day)}, true, 0},
		{"cold rows in a hot file", p, []func(*schema.State){cold(failed(8, 200*day)), failed(7, 100*day), seen(day)}, false, 19},
		{"only cold rows past the thresholds", p, []func(*schema.State){cold(failed(8, 200*day)), failed(8, day)}, false, 0},
		{"leased rows, live or ended", p, []func(*schema.State){leased(failed(8, 200*day), now+hour),
			leased(failed(8, 200*day), now-hour), failed(8, day)}, false, 19},
		{"fetched rows archived too", fetchedToo, []func(*schema.State){fetched(1, 31*day), failed(8, 31*day), seen(day)}, false, 21},
		{"fetched rows not unseen long enough", fetchedToo, []func(*schema.State){fetched(1, 29*day), failed(8, 29*day)}, true, 0},
	} {
		rows := make([]schema.State, 64)
		for i := range rows {
			rows[i] = newHash(hashAt(0x40, uint64(i)), now-day)
			c.rows[i%len(c.rows)](&rows[i])
		}
		for _, w := range []struct {
			name  string
			write func(t *testing.T, path string, rows []schema.State)
			stats bool // of last_seen and attempts, one row group
		}{
			{"statecol", writeStatecol, true},
			{"parquet-go", writeParquetGo(false), false},
			{"parquet-go without statistics", writeParquetGo(true), false},
		} {
			t.Run(c.name+"/"+w.name, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "part-a.parquet")
				w.write(t, path, rows)
				r := &runner{p: c.p, now: now}
				// Results for rows 3 (a failure: a hit, unless its row is
				// cold), 4 (released only) and 40 (a failure).
				results := make([]result, 4)
				for k, o := range []string{schema.OutcomeNoPeers, schema.OutcomeReleased, schema.OutcomeReleased, schema.OutcomeNoPeers} {
					results[k].Outcome = o
				}
				changes := []change{{row: 3, lo: 0, hi: 1}, {row: 4, lo: 1, hi: 3}, {row: 40, lo: 3, hi: 4}}
				hf := openHot(t, path, slices.Clone(changes))
				defer hf.src.Close()
				groups := hf.src.RowGroups()
				switch {
				case w.stats:
					if got := r.mayArchive(hf, groups[0]); got == c.skip {
						t.Fatalf("mayArchive = %v, want %v", got, !c.skip)
					}
				case len(groups) != 4:
					t.Fatalf("%d row groups, want 4", len(groups))
				case strings.HasSuffix(w.name, "without statistics"):
					for _, rg := range groups {
						chunk, _ := hf.src.Column(rg, "last_seen")
						if _, _, ok := statecol.Int64Bounds(chunk, rg.NumRows()); ok || !r.mayArchive(hf, rg) {
							t.Fatalf("last_seen has statistics, or mayArchive false without them")
						}
					}
				}
				wantCold, wantHits, wantAdd := scanReference(t, r, path, changes, results)
				if len(wantAdd) != c.want {
					t.Fatalf("the rules archive %d rows, want %d: the case is not what it says", len(wantAdd), c.want)
				}
				gotCold, gotHits, err := r.archiveScan(hf, results, new(scanBuf), math.MaxInt64)
				if err != nil {
					t.Fatal(err)
				}
				if gotCold != wantCold || gotHits != wantHits {
					t.Errorf("cold %d, hits %d; want %d, %d", gotCold, gotHits, wantCold, wantHits)
				}
				want := slices.Clone(changes)
				for _, row := range wantAdd {
					want = append(want, change{row: row})
				}
				slices.SortFunc(want, func(a, b change) int { return int(a.row - b.row) })
				if !slices.Equal(hf.changes, want) {
					t.Errorf("changes %v, want %v", hf.changes, want)
				}
				// With a limit below the counts, the scan stops past it
				// and leaves the changes as they were.
				if limit := wantCold + wantHits - 1; limit >= 0 {
					hf := openHot(t, path, slices.Clone(changes))
					defer hf.src.Close()
					gotCold, gotHits, err := r.archiveScan(hf, results, new(scanBuf), limit)
					if err != nil {
						t.Fatal(err)
					}
					if gotCold+gotHits <= limit || gotCold > wantCold || gotHits > wantHits || !slices.Equal(hf.changes, changes) {
						t.Errorf("limit %d: cold %d, hits %d, changes %v", limit, gotCold, gotHits, hf.changes)
					}
				}
			})
		}
	}
}

// scanReference is what archiveScan found before it read columns
// selectively: every row decoded whole and tested by runner.archives.
func scanReference(t *testing.T, r *runner, path string, changes []change, results []result) (cold, hits int64, add []int64) {
	t.Helper()
	rows, err := statecol.ReadStateFile(rowio.UnrecordedFile(path))
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		st, row := &rows[i], int64(i)
		k := slices.IndexFunc(changes, func(ch change) bool { return ch.row == row })
		switch {
		case st.Tier == schema.TierCold:
			cold++
		case k >= 0:
			if results[changes[k].lo].Outcome != schema.OutcomeReleased {
				hits++
			}
		case r.archives(st, false, false, false) != keep:
			add = append(add, row)
			cold++
		}
	}
	return cold, hits, add
}

// openHot opens the state file at path as the splice path does, with
// the rows results change.
func openHot(t *testing.T, path string, changes []change) *hotFile {
	t.Helper()
	src, err := statecol.Open(rowio.UnrecordedFile(path))
	if err != nil {
		t.Fatal(err)
	}
	hs, err := src.AppendHashes(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &hotFile{path: path, src: src, hashes: hs, changes: changes}
}

func writeStatecol(t *testing.T, path string, rows []schema.State) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := statecol.WriteState(f, rows); err != nil {
		t.Fatal(err)
	}
}

// writeParquetGo writes rows in row groups of 16 with parquet-go's
// writer, without statistics of last_seen and attempts if bare.
func writeParquetGo(bare bool) func(t *testing.T, path string, rows []schema.State) {
	return func(t *testing.T, path string, rows []schema.State) {
		t.Helper()
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		opts := []parquet.WriterOption{parquet.MaxRowsPerRowGroup(16)}
		if bare {
			opts = append(opts, parquet.SkipPageBounds("last_seen"), parquet.SkipPageBounds("attempts"))
		}
		w := parquet.NewGenericWriter[schema.State](f, opts...)
		if _, err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
