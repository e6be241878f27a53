package plan

import (
	"testing"

	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// coldEverywhere returns one due cold hash in each of the 256 partitions.
func coldEverywhere(t *testing.T) []schema.State {
	t.Helper()
	var states []schema.State
	for pre := range 256 {
		st := failedHash(t, hashAt(byte(pre), uint64(pre)), ms(t0), ms(t0))
		st.Tier = schema.TierCold
		states = append(states, st)
	}
	return states
}

func TestDailyPassesSweepTheWholeColdTier(t *testing.T) {
	p := schedule.Default()
	p.Plan.ColdShare = 0.5 // room for a whole window of due cold hashes
	dir := makeDataset(t, coldEverywhere(t), nil)
	if err := schedule.Save(dir, p); err != nil {
		t.Fatal(err)
	}
	passes := 256 / p.Plan.ColdPartitions
	seen := map[schema.Hash]bool{}
	now := ms(t0) + 30*day
	for pass := range passes {
		// A daily cron: every pass at the same hour of the day.
		jobs, st := runPlan(t, dir, now+int64(pass)*day, 100, nil)
		if st.PlannedCold != p.Plan.ColdPartitions {
			t.Fatalf("pass %d planned %d cold hashes, want a window's %d", pass, st.PlannedCold, p.Plan.ColdPartitions)
		}
		for _, j := range jobs {
			seen[j.InfoHash] = true
		}
	}
	if len(seen) != 256 {
		t.Fatalf("%d daily passes planned %d of the 256 cold partitions' hashes, want all", passes, len(seen))
	}
}

func TestColdSweepCursorMovesWithTheCommit(t *testing.T) {
	st0 := failedHash(t, hashAt(0x80, 1), ms(t0), ms(t0))
	st0.Tier = schema.TierCold
	dir := makeDataset(t, []schema.State{st0}, nil)
	now := ms(t0) + 30*day
	// A dry run (--limit 0) reads the window (partition 80 is not in
	// it) and leaves the sweep where it is, with no commit.
	_, st := runPlan(t, dir, now, 0, nil)
	if st.ColdSweepStart != 0 || st.ColdSweepNext != 0 || st.Snapshot != 1 {
		t.Fatalf("--limit 0: sweep %d -> %d, snapshot %d; want 0 -> 0 at snapshot 1", st.ColdSweepStart, st.ColdSweepNext, st.Snapshot)
	}
	// Passes whose window holds nothing due plan nothing but still move
	// the sweep on, or the partitions past them would never be read.
	for pass := range 8 {
		jobs, st := runPlan(t, dir, now+int64(pass)*minute, 100, nil)
		if len(jobs) != 0 || st.ColdSweepStart != int64(16*pass) || st.ColdSweepNext != int64(16*pass+16) || st.Snapshot != int64(2+pass) {
			t.Fatalf("pass %d: %d jobs, sweep %d -> %d, snapshot %d; want none, %d -> %d at snapshot %d",
				pass, len(jobs), st.ColdSweepStart, st.ColdSweepNext, st.Snapshot, 16*pass, 16*pass+16, 2+pass)
		}
	}
	jobs, st := runPlan(t, dir, now+hour, 100, nil)
	if len(jobs) != 1 || jobs[0].InfoHash != st0.InfoHash || st.ColdSweepStart != 0x80 {
		t.Fatalf("ninth pass (window from %02x): %d jobs, want the cold hash of partition 80", st.ColdSweepStart, len(jobs))
	}
}

func TestNoColdFilesNoSweepCommit(t *testing.T) {
	dir := makeDataset(t, []schema.State{failedHash(t, hashAt(1, 1), ms(t0), ms(t0))}, nil)
	_, st := runPlan(t, dir, ms(t0), 100, nil) // not due yet: nothing to lease
	if st.Snapshot != 1 || st.ColdSweepNext != st.ColdSweepStart {
		t.Fatalf("no cold files and nothing due: snapshot %d, sweep %d -> %d; want no commit", st.Snapshot, st.ColdSweepStart, st.ColdSweepNext)
	}
}

func TestColdReserve(t *testing.T) {
	tests := []struct {
		name  string
		limit int
		share float64
		want  int
	}{
		{"default share", 10000, 0.02, 200},
		{"rounds to zero", 49, 0.02, 1},
		{"one job", 1, 0.02, 1},
		{"limit 0", 0, 0.02, 0},
		{"all", 10, 1, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := coldReserve(tt.limit, tt.share); got != tt.want {
				t.Errorf("coldReserve(%d, %v) = %d, want %d", tt.limit, tt.share, got, tt.want)
			}
		})
	}
}

func TestSmallLimitStillPlansCold(t *testing.T) {
	p := schedule.Default()
	p.Plan.ColdPartitions = 256 // every cold file in reach
	var states []schema.State
	for i := range uint64(241) {
		st := failedHash(t, hashAt(byte(i), i), ms(t0), ms(t0))
		st.Tier = schema.TierCold
		states = append(states, st)
	}
	for i := range uint64(100) {
		states = append(states, failedHash(t, hashAt(byte(i), 1000+i), ms(t0), ms(t0)))
		states = append(states, newHash(hashAt(byte(i), 2000+i), ms(t0)))
	}
	dir := makeDataset(t, states, nil)
	if err := schedule.Save(dir, p); err != nil {
		t.Fatal(err)
	}
	// --limit 49 at 2%: floor(0.98) = 0 used to plan no cold hash at all.
	_, st := runPlan(t, dir, ms(t0)+day, 49, nil)
	if st.DueCold != 241 || st.PlannedCold != 1 || st.Planned != 49 {
		t.Fatalf("--limit 49 with 241 cold hashes due: planned %d (%d cold); want 49, 1 cold", st.Planned, st.PlannedCold)
	}
}

func TestUnusedLimitGoesToCold(t *testing.T) {
	p := schedule.Default()
	p.Plan.ColdPartitions = 256
	var states []schema.State
	for i := range uint64(100) {
		st := failedHash(t, hashAt(byte(i), i), ms(t0), ms(t0))
		st.Tier = schema.TierCold
		states = append(states, st)
	}
	for i := range uint64(5) {
		states = append(states, newHash(hashAt(byte(i), 1000+i), ms(t0)))
	}
	dir := makeDataset(t, states, nil)
	if err := schedule.Save(dir, p); err != nil {
		t.Fatal(err)
	}
	_, st := runPlan(t, dir, ms(t0)+day, 50, nil)
	if st.PlannedNew != 5 || st.PlannedCold != 45 {
		t.Fatalf("--limit 50, 5 new and 100 cold due: planned %d new, %d cold; want 5 and the 45 left", st.PlannedNew, st.PlannedCold)
	}
}

// makeHotOnly commits states with every row in one file per partition,
// a hot file, whatever its tier: as merge leaves the hashes it archives
// in place (tier cold in their hot file).
func makeHotOnly(t *testing.T, states []schema.State) string {
	t.Helper()
	dir := t.TempDir()
	datasettest.CommitStateFiles(t, dir, datasettest.HotFiles(states))
	return dir
}

// TestColdRowsInHotFilesFollowTheSweep: cold hashes left in hot files
// (merge archives in place) are planned as the cold files' are, when
// their partition is in the pass's cold window, and the window moves on
// although the state has no cold file: daily passes plan a window's worth
// each and, after a whole sweep, every one of them.
func TestColdRowsInHotFilesFollowTheSweep(t *testing.T) {
	p := schedule.Default()
	p.Plan.ColdShare = 0.5 // room for a whole window of due cold hashes
	states := coldEverywhere(t)
	for i := range states {
		if i%2 == 0 {
			states[i].Tier = schema.TierHot // one hot row in every other partition's file
			states[i].NextRetry = ms(t0) + 365*day
		}
	}
	dir := makeHotOnly(t, states)
	if err := schedule.Save(dir, p); err != nil {
		t.Fatal(err)
	}
	passes := 256 / p.Plan.ColdPartitions
	seen := map[schema.Hash]bool{}
	now := ms(t0) + 30*day
	for pass := range passes {
		jobs, st := runPlan(t, dir, now+int64(pass)*day, 100, nil)
		if st.ColdInHot != 128 {
			t.Fatalf("pass %d: %d cold rows in hot files, want 128", pass, st.ColdInHot)
		}
		if st.PlannedCold != p.Plan.ColdPartitions/2 || len(jobs) != st.PlannedCold {
			t.Fatalf("pass %d planned %d jobs, %d cold; want the window's %d cold hashes", pass, len(jobs), st.PlannedCold, p.Plan.ColdPartitions/2)
		}
		for _, j := range jobs {
			if j.Reason != schema.ReasonCold || seen[j.InfoHash] {
				t.Fatalf("pass %d: %x planned as %s (seen before: %v)", pass, j.InfoHash[:1], j.Reason, seen[j.InfoHash])
			}
			seen[j.InfoHash] = true
		}
	}
	if len(seen) != 128 {
		t.Fatalf("%d daily passes planned %d of the 128 cold hashes, want all", passes, len(seen))
	}
}
