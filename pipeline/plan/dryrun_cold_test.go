package plan

import (
	"context"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/leases"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// coldSweepStates lays out a state whose partitions differ, so that each
// cold window finds its own due cold hashes: every partition has a new
// hash in its hot file; a cold file with a due cold hash where prefix%3
// is 0 (and one not yet due where prefix%4 is 0); a cold row in the hot
// file (archived in place) where prefix%5 is 0; a failed hot hash where
// prefix%8 is 0. All are due at coldSweepNow but the ones said not.
func coldSweepStates(t *testing.T) map[string][]datasettest.StateFile {
	t.Helper()
	parts := map[string][]datasettest.StateFile{}
	for pre := range 256 {
		p := byte(pre)
		hot := []schema.State{newHash(hashAt(p, 1), ms(t0))}
		if pre%5 == 0 {
			st := failedHash(t, hashAt(p, 2), ms(t0), ms(t0))
			st.Tier = schema.TierCold
			hot = append(hot, st)
		}
		if pre%8 == 0 {
			hot = append(hot, failedHash(t, hashAt(p, 3), ms(t0), ms(t0)))
		}
		var cold []schema.State
		if pre%3 == 0 {
			st := failedHash(t, hashAt(p, 4), ms(t0), ms(t0))
			st.Tier = schema.TierCold
			cold = append(cold, st)
		}
		if pre%4 == 0 {
			st := failedHash(t, hashAt(p, 5), ms(t0), ms(t0))
			st.Tier, st.NextRetry = schema.TierCold, ms(t0)+365*day
			cold = append(cold, st)
		}
		files := []datasettest.StateFile{{Rows: hot}}
		if len(cold) > 0 {
			files = append(files, datasettest.StateFile{Name: schedule.ColdFileName(), Rows: cold})
		}
		parts[fmt.Sprintf("%02x", pre)] = files
	}
	return parts
}

var coldSweepNow = t0.Add(30 * 24 * time.Hour)

// setCursor commits the cold sweep's cursor at v, as a pass's commit
// leaves it.
func setCursor(t *testing.T, dir string, v int64) {
	t.Helper()
	datasettest.Commit(t, dir, func(tx *dataset.Tx) { tx.SetCursor(dataset.CursorColdSweep, v) })
}

// writeLeases commits ls as the dataset's lease table.
func writeLeases(t *testing.T, dir string, ls ...schema.Lease) {
	t.Helper()
	datasettest.Commit(t, dir, func(tx *dataset.Tx) {
		set := leases.Set{}
		for _, l := range ls {
			set[l.InfoHash] = l
		}
		if err := leases.Write(tx, set); err != nil {
			t.Fatal(err)
		}
	})
}

// dryRun runs plan-retries --limit 0 without -o on dir at now.
func dryRun(t *testing.T, dir string, now time.Time) Stats {
	t.Helper()
	o := DefaultOptions()
	o.Data, o.Now, o.Limit, o.Output, o.Stdout = dir, now, 0, "", nil
	st, err := Run(context.Background(), o)
	if err != nil {
		t.Fatalf("dry run: %v", err)
	}
	return st
}

// scanCounts are the counters of what a pass found: a dry run's must be
// a real pass's at the same cursor and time.
func scanCounts(st Stats) string {
	return fmt.Sprintf("hot_rows %d, cold_rows %d, cold_in_hot %d, fetched %d, not_due %d, leased %d, blocked %d, "+
		"due %d (new %d, retry %d, cold %d), sweep from %02x", st.Scanned, st.ColdScanned, st.ColdInHot, st.Fetched,
		st.NotDue, st.Leased, st.Blocked, st.Due, st.DueNew, st.DueRetry, st.DueCold, st.ColdSweepStart)
}

// TestDryRunCountsTheColdWindow: a dry run (--limit 0) reads the cold
// hashes of the window at the sweep's cursor, cold files and cold rows in
// hot files, as a real pass does, and so reports the same due counts
// (due_cold among them: it said 0, having no cold reserve to read the
// window for); it leaves the cursor where it is, and the real pass after
// it sweeps that same window and moves it on. Over window positions: the
// first, one in the middle, the last, one that wraps past ff, and one not
// on a multiple of the window's width.
func TestDryRunCountsTheColdWindow(t *testing.T) {
	parts := coldSweepStates(t)
	for _, tt := range []struct {
		name    string
		cursor  int64
		dueCold int64 // the window's due cold hashes: cold files' (prefix%3), cold rows in hot files' (prefix%5)
	}{
		{"first window", 0x00, 6 + 4},  // 00 03 06 09 0c 0f; 00 05 0a 0f
		{"middle", 0x80, 5 + 3},        // 81 84 87 8a 8d; 82 87 8c
		{"last window", 0xf0, 6 + 4},   // f0 f3 f6 f9 fc ff; f0 f5 fa ff
		{"wraps past ff", 0xf8, 6 + 4}, // f9 fc ff 00 03 06; fa ff 00 05
		{"off the grid", 0x13, 5 + 3},  // 15 18 1b 1e 21; 14 19 1e
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			datasettest.CommitStateFiles(t, dir, parts)
			setCursor(t, dir, tt.cursor)
			want := int64(0)
			for i := range int64(16) {
				pre := (tt.cursor + i) % 256
				if pre%3 == 0 {
					want++
				}
				if pre%5 == 0 {
					want++
				}
			}
			if want != tt.dueCold {
				t.Fatalf("the table's due_cold %d is not the window's %d", tt.dueCold, want)
			}
			dry := dryRun(t, dir, coldSweepNow)
			if dry.DueCold != tt.dueCold || dry.Planned != 0 {
				t.Errorf("dry run from %02x: due_cold %d, planned %d; want %d due cold, none planned", tt.cursor, dry.DueCold, dry.Planned, tt.dueCold)
			}
			if dry.ColdSweepStart != tt.cursor || dry.ColdSweepNext != tt.cursor {
				t.Errorf("dry run: sweep %02x -> %02x, want it to stay at %02x", dry.ColdSweepStart, dry.ColdSweepNext, tt.cursor)
			}
			if got := datasettest.Current(t, dir).Cursor(dataset.CursorColdSweep); got != tt.cursor {
				t.Fatalf("after the dry run the cursor is %02x, was %02x", got, tt.cursor)
			}
			_, real := runPlan(t, dir, ms(coldSweepNow), 1000, nil)
			if got, want := scanCounts(dry), scanCounts(real); got != want {
				t.Errorf("dry run counted\n%s\na real pass at the same cursor and time\n%s", got, want)
			}
			if real.ColdSweepNext != (tt.cursor+16)%256 || real.PlannedCold != int(tt.dueCold) {
				t.Errorf("the real pass after it: sweep %02x -> %02x, %d cold planned; want %02x -> %02x, %d",
					real.ColdSweepStart, real.ColdSweepNext, real.PlannedCold, tt.cursor, (tt.cursor+16)%256, tt.dueCold)
			}
		})
	}
}

// tree describes every file under dir by its path, size and CRC-32C,
// every folder by its path and every symbolic link by its target, one a
// line in walk order.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		switch {
		case e.IsDir():
			fmt.Fprintf(&b, "%s/\n", rel)
			return nil
		case e.Type()&fs.ModeSymlink != 0: // a table's current/
			to, err := os.Readlink(path)
			fmt.Fprintf(&b, "%s -> %s\n", rel, to)
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %08x\n", rel, len(data), crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestDryRunLeavesTheDatasetAlone: a dry run, with or without -o,
// changes no file of the dataset (manifests, leases, the cold sweep's
// cursor, state files: every path, size and CRC-32C is as before), on a
// dataset whose cold window holds due cold hashes, and one with a lease
// ended over leases.Grace ago, which a real pass drops (the dry run
// committed that drop, and with it collected the snapshots past --keep).
func TestDryRunLeavesTheDatasetAlone(t *testing.T) {
	for _, tt := range []struct {
		name  string
		out   bool // -o FILE (outside the dataset)
		stale bool // a stale lease to drop
	}{
		{"no -o", false, false},
		{"-o FILE", true, false},
		{"stale lease, no -o", false, true},
		{"stale lease, -o FILE", true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			datasettest.CommitStateFiles(t, dir, coldSweepStates(t))
			setCursor(t, dir, 0x40)
			if tt.stale {
				until := ms(coldSweepNow) - leases.Grace - minute
				writeLeases(t, dir, schema.Lease{InfoHash: hashAt(0x41, 1), LeaseID: "Lstale", LeaseUntil: until,
					Attempt: 1, Reason: schema.ReasonNew, PlannedAt: until - hour})
			}
			before := tree(t, dir)
			o := DefaultOptions()
			o.Data, o.Now, o.Limit, o.Output, o.Stdout = dir, coldSweepNow, 0, "", nil
			if tt.out {
				o.Output = filepath.Join(t.TempDir(), "jobs.parquet")
			}
			st, err := Run(context.Background(), o)
			if err != nil || st.DueCold == 0 || st.Committed || st.LeasesPruned != 0 {
				t.Fatalf("dry run: due_cold %d, committed %v, %d stale leases dropped (%v); want cold hashes due, no commit",
					st.DueCold, st.Committed, st.LeasesPruned, err)
			}
			if after := tree(t, dir); after != before {
				t.Errorf("a dry run changed the dataset's files; before:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}
