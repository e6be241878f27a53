package dedup

import (
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/statecol"
	"github.com/infohash/infohash/internal/goldentest"
	"github.com/infohash/infohash/pipeline/schedule"
	"github.com/infohash/infohash/tools/stategen/genstate"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// coldState writes a dataset at data of tools/stategen's rows
// (genstate.Rows: 35% never tried, 20% fetched, the rest failed at some
// backoff step, the archived ones in a cold file) over parts partitions
// of n hashes each. Every partition's hot rows are split over hotFiles
// sorted files (their hashes interleaved), as deltas leave them. It
// returns a batch: two sightings at seen of every 7th hash, cold ones
// included, and one of a new hash per 50 rows.
func coldState(t testing.TB, data string, parts, n, hotFiles int, seen int64) []schema.Observation {
	t.Helper()
	d, err := dataset.Open(context.Background(), data, dataset.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	var obs []schema.Observation
	sight := func(h schema.Hash, k int) {
		for i := range k {
			obs = append(obs, schema.Observation{InfoHash: h, HashType: schema.HashV1, ObservedAt: seen + int64(i)*1000,
				Source: schema.SourceGetPeers, RunID: "rewarm"})
		}
	}
	for p := range parts {
		rows := genstate.Rows(rand.New(rand.NewPCG(7, uint64(p))), byte(p*17), n, t0.UnixMilli())
		for i, st := range rows {
			h := st.InfoHash
			if i%7 == 0 {
				sight(h, 2)
			}
			if i%50 == 0 {
				h[19] ^= 0x5a // a new hash next to a known one
				sight(h, 1)
			}
		}
		slices.SortFunc(rows, func(a, b schema.State) int { return hashCmp(a.InfoHash, b.InfoHash) })
		hot, cold := make([][]schema.State, hotFiles), []schema.State(nil)
		for i, st := range rows {
			if st.Tier == schema.TierCold {
				cold = append(cold, st)
			} else {
				hot[i%hotFiles] = append(hot[i%hotFiles], st)
			}
		}
		key := fmt.Sprintf("%02x", p*17)
		var files []dataset.FileInfo
		for _, part := range append(hot, cold) {
			name := dataset.NewName(".parquet")
			if len(part) > 0 && part[0].Tier == schema.TierCold {
				name = schedule.ColdFileName()
			}
			fi, err := dataset.WriteStagedAs(tx, dataset.TableState, key, name, part)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, fi)
		}
		tx.SetPartition(dataset.TableState, key, files)
	}
	if _, err := tx.Commit(context.Background(), dataset.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	return obs
}

// rewarmOpts sets the scheduler's reactivation rule, as the CLI does.
func rewarmOpts(o *Options) {
	pol := schedule.Default()
	o.Reactivate = func(s *schema.State, at, announcedAt int64) bool { return schedule.Reactivate(pol, s, at, announcedAt) }
}

// stateSnapshot describes the committed state partition by partition:
// for its hot files, then its cold ones, the rows and a digest of them in
// hash order, whichever files hold them (a compaction leaves one file of
// each, an update spliced files and a delta).
func stateSnapshot(t *testing.T, data string) string {
	t.Helper()
	d, m := datasettest.OpenCurrent(t, data)
	defer d.Close()
	tb := m.Table(dataset.TableState)
	var b strings.Builder
	for _, key := range tb.PartitionKeys() {
		for _, kind := range []string{"hot", "cold"} {
			var rows []schema.State
			for _, f := range tb.Partitions[key] {
				if schedule.IsColdFile(f.Name) != (kind == "cold") {
					continue
				}
				rs, err := statecol.ReadStateFile(d.DataFile(m, dataset.TableState, key, f))
				if err != nil {
					t.Fatal(err)
				}
				rows = append(rows, rs...)
			}
			if len(rows) == 0 {
				continue
			}
			slices.SortFunc(rows, func(a, b schema.State) int { return hashCmp(a.InfoHash, b.InfoHash) })
			h := sha256.New()
			for _, r := range rows {
				fmt.Fprintf(h, "%v\n", r)
			}
			fmt.Fprintf(&b, "%s %s rows=%d sha256=%x\n", key, kind, len(rows), h.Sum(nil))
		}
	}
	return b.String()
}

// TestColdTouchSnapshot: a batch that touches cold files leaves the state
// testdata/rewarm-snapshot-N.golden describes, row for row, whatever way
// dedup lays the rows out in files. The golden files were made when such
// a batch compacted the partition (one hot file, one cold), before
// rewrite merged the sorted files instead of sorting their concatenation
// and before the update path thawed cold files instead of compacting
// (regenerate with -update).
func TestColdTouchSnapshot(t *testing.T) {
	for _, hotFiles := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d hot files", hotFiles), func(t *testing.T) {
			dir := t.TempDir()
			data := filepath.Join(dir, "ds")
			obs := coldState(t, data, 4, 3000, hotFiles, t0.Add(time.Hour).UnixMilli())
			st, err := run(t, data, rewarmOpts, writeObs(t, dir, obs))
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("known=%d new=%d reactivated=%d rewarmed=%d\n%s",
				st.ConfirmedKnown, st.New, st.Reactivated, st.Rewarmed, stateSnapshot(t, data))
			goldentest.Check(t, filepath.Join("testdata", fmt.Sprintf("rewarm-snapshot-%d.golden", hotFiles)), []byte(got), *update)
			if st.Rewarmed == 0 || st.Reactivated == 0 {
				t.Fatalf("the batch rewarmed %d and reactivated %d hashes: it must do both", st.Rewarmed, st.Reactivated)
			}
		})
	}
}
