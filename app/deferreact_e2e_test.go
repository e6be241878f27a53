package app

import (
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// TestSightingPullsDeferredNewHash: two never-tried hashes whose first
// attempt found only penalised peers (peers_penalised, penalties running
// 3 more days) stay new and wait; a sighting of one of them 6 hours on
// pulls its retry forward (reactivation.spread: within 30 minutes), and
// the next plan-retries plans it, reason reactivated, while the other
// keeps waiting. Before, both waited the 3 days. The real binary, the
// clock moved with --now.
func TestSightingPullsDeferredNewHash(t *testing.T) {
	const (
		sighted = "0d01000000000000000000000000000000000000"
		quiet   = "0d02000000000000000000000000000000000000"
	)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rfc := func(d time.Duration) string { return t0.Add(d).Format(time.RFC3339) }
	data := t.TempDir() + "/ih"
	dedupList(t, data, rfc(0), sighted, quiet)
	jobs := decodeJobs(t, mustRun(t, nil, "plan-retries", "--data", data, "--far-now", "--now", rfc(time.Minute),
		"--limit", "10", "-o", "-"))
	if len(jobs) != 2 {
		t.Fatalf("%d jobs, want 2", len(jobs))
	}
	rs := fakeFetch(jobs, t0.Add(2*time.Minute))
	for i := range rs {
		rs[i].Outcome, rs[i].RetryAfter = schema.OutcomePeersPenalised, t0.Add(72*time.Hour).UnixMilli()
		rs[i].PeersFound = 1
	}
	mergeFile(t, data, t0.Add(3*time.Minute), rs)
	dedupList(t, data, rfc(6*time.Hour), sighted)
	jobs = decodeJobs(t, mustRun(t, nil, "plan-retries", "--data", data, "--far-now", "--now", rfc(6*time.Hour+30*time.Minute),
		"--limit", "10", "-o", "-"))
	if len(jobs) != 1 || schema.Hex(jobs[0].InfoHash) != sighted || jobs[0].Reason != schema.ReasonReactivated {
		t.Fatalf("plan-retries 30 minutes after the sighting: jobs %+v, want %s alone, reason %s", jobs, sighted,
			schema.ReasonReactivated)
	}
}
