package fetch

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/pipeline/plan"
	"github.com/infohash/infohash/pipeline/schedule"
	"github.com/infohash/infohash/tools/badpeers"
)

// TestDeadlineAfterFewJobsAttemptsNewHashes: under a backlog of starved
// retries, plan-retries keeps half of --limit for new hashes, and a
// fetch whose deadline passes after a few jobs (one at a time) has
// attempted about half new hashes among them. When the jobs file was
// written best first across the pools, the starved retries all came
// first: a pass cut short released every new hash, pass after pass.
func TestDeadlineAfterFewJobsAttemptsNewHashes(t *testing.T) {
	const (
		limit    = 20
		attempts = 6 // the jobs done before the deadline passes
	)
	now := time.Now().UTC().Truncate(time.Millisecond)
	dir := t.TempDir()
	var states []schema.State
	for i := range byte(limit) {
		fresh := schema.State{InfoHash: schema.Hash{0x10, i}, HashType: schema.HashV1, FirstSeen: now.UnixMilli(),
			LastSeen: now.UnixMilli(), SeenCount: 1, LastSource: schema.SourceGetPeers, Activity: 1,
			MetadataStatus: schema.StatusNew, Tier: schema.TierHot}
		failed := fresh
		failed.InfoHash[0], failed.Activity = 0x30, 9 // busier than the new ones
		// Failed 30 days ago after a short delay: starved, ahead of any new hash by priority.
		failedAt := now.Add(-30 * 24 * time.Hour).UnixMilli()
		failed.FirstSeen, failed.LastSeen = failedAt, failedAt
		if err := schedule.ApplyFailure(schedule.Default(), &failed, schema.OutcomeNoPeers, failedAt, false); err != nil {
			t.Fatal(err)
		}
		states = append(states, fresh, failed)
	}
	writeState(t, dir, states)
	jobsFile := filepath.Join(t.TempDir(), "jobs.parquet")
	po := plan.DefaultOptions()
	half := 0.5
	po.Data, po.Now, po.Limit, po.NewShare, po.Output = dir, now, limit, &half, jobsFile
	pst, err := plan.Run(context.Background(), po)
	if err != nil {
		t.Fatal(err)
	}
	if pst.PlannedNew != limit/2 || pst.PlannedRetry != limit/2 {
		t.Fatalf("planned %d new and %d retries, want %d of each", pst.PlannedNew, pst.PlannedRetry, limit/2)
	}

	// One job at a time against a peer that never answers: the first
	// jobs are cut off at once (a timeout each), and the deadline passes
	// as the next one starts, which stalls until the run stops.
	stall := startPeer(t, badpeers.Stall)
	out := filepath.Join(t.TempDir(), "results.parquet")
	o := testOptions()
	o.Input, o.Output, o.Concurrency, o.Peers = jobsFile, out, 1, []string{stall.Addr()}
	o.PeerTimeout = backstop // only the run's stop ends the stalled job
	var deadline func()
	o.passDeadline = func(pass func()) { deadline = pass }
	var started atomic.Int32
	o.cutJob = func(job schema.Job, cut func()) {
		switch n := started.Add(1); {
		case n <= attempts:
			cut()
		case n == attempts+1:
			deadline()
		}
	}
	_, err = runGuarded(t, context.Background(), o)
	if exitcode.Of(err) != exitcode.Partial {
		t.Fatalf("fetch: %v (exit %d), want exit %d (its deadline passed)", err, exitcode.Of(err), exitcode.Partial)
	}
	var attempted, fresh, released int
	for h, r := range readResults(t, out) {
		if r.Outcome == schema.OutcomeReleased {
			released++
			continue
		}
		attempted++
		if h[0] == 0x10 {
			fresh++
		}
	}
	if attempted != attempts || released == 0 {
		t.Fatalf("%d jobs attempted and %d released, want %d attempted and the rest released", attempted, released, attempts)
	}
	if lo, hi := attempts/2-1, attempts/2+1; fresh < lo || fresh > hi {
		t.Errorf("%d new hashes among the %d jobs attempted before the deadline, want %d to %d (their half of the jobs file)",
			fresh, attempts, lo, hi)
	}
}
