package merge

import (
	"testing"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestLastFailureAt: merge sets last_failure_at with last_failure, to the
// attempt's time; a local_error on a failed hash and a deferral
// (peers_penalised) leave both, though last_attempt moves; a success
// clears both. A never-tried hash's local_error is its last_failure, at
// that attempt's time.
func TestLastFailureAt(t *testing.T) {
	type step struct {
		outcome string
		failure string // last_failure after the step
		at      int    // the step whose attempt last_failure_at is (-1: null)
	}
	for _, tt := range []struct {
		name  string
		steps []step
	}{
		{"failures, a local error, a deferral, a success", []step{
			{schema.OutcomeNoPeers, schema.OutcomeNoPeers, 0},
			{schema.OutcomeLocalError, schema.OutcomeNoPeers, 0},
			{schema.OutcomePeersPenalised, schema.OutcomeNoPeers, 0},
			{schema.OutcomeTimeout, schema.OutcomeTimeout, 3},
			{schema.OutcomeOK, "", -1},
		}},
		{"a never-tried hash's local error", []step{
			{schema.OutcomeLocalError, schema.OutcomeLocalError, 0},
			{schema.OutcomeLocalError, schema.OutcomeLocalError, 1},
			{schema.OutcomeNoPeers, schema.OutcomeNoPeers, 2},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			info, h := torrentInfo("provenance " + tt.name)
			dir := makeDataset(t, []schema.State{newHash(h, t0)})
			var ats []int64
			now := t0
			for i, s := range tt.steps {
				jobs := planJobs(t, dir, now, 1)
				if len(jobs) != 1 {
					t.Fatalf("step %d: %d jobs planned at %d", i, len(jobs), now)
				}
				at := now + minute
				ats = append(ats, at)
				r := failure(jobs[0], s.outcome, at)
				switch s.outcome {
				case schema.OutcomeOK:
					r = success(jobs[0], info, at)
				case schema.OutcomePeersPenalised:
					r.PeersFound, r.RetryAfter = 0, at+hour
				}
				runMerge(t, dir, at+minute, writeResults(t, []schema.Result{r}))
				got := stateOf(t, dir)[h]
				want := int64(0)
				if s.at >= 0 {
					want = ats[s.at]
				}
				if got.LastFailure != s.failure || got.LastFailureAt != want || got.LastAttempt != at {
					t.Fatalf("step %d (%s): last_failure %q at %d, last_attempt %d; want %q at %d, %d", i, s.outcome,
						got.LastFailure, got.LastFailureAt, got.LastAttempt, s.failure, want, at)
				}
				now = max(got.NextRetry, at+minute)
			}
		})
	}
}

// TestResultOnlyHashFirstSource: a result for a hash the state lacks adds
// its row with first_source import (as its last_source until sighted),
// and a later result does not change it.
func TestResultOnlyHashFirstSource(t *testing.T) {
	known := hashAt(0x20, 1)
	unknown := hashAt(0x21, 1)
	dir := makeDataset(t, []schema.State{newHash(known, t0)})
	for i, at := range []int64{t0 + minute, t0 + 2*hour} {
		runMerge(t, dir, at+minute, writeResults(t, []schema.Result{
			{InfoHash: unknown, AttemptedAt: at, Outcome: schema.OutcomeNoPeers}}))
		s := stateOf(t, dir)
		if g := s[unknown]; g.FirstSource != schema.SourceImport || g.SeenCount != 0 || g.FirstSeen != t0+minute ||
			g.LastFailureAt != at {
			t.Fatalf("result %d: the added row has first_source %q seen_count %d first_seen %d last_failure_at %d",
				i+1, g.FirstSource, g.SeenCount, g.FirstSeen, g.LastFailureAt)
		}
		if g := s[known]; g.FirstSource != "" {
			t.Fatalf("result %d: the known row's first_source became %q", i+1, g.FirstSource)
		}
	}
}

// TestUnionProvenance: merge --from keeps first_source with the first_seen
// it keeps (the earlier, a known one over a null one; an unknown source
// too; at a tie, the greater, a known one) and
// last_failure_at with the last_failure it takes, whichever side each
// record is on.
func TestUnionProvenance(t *testing.T) {
	rec := func(first int64, src string, attempt int64, failure string, failedAt int64) schema.State {
		s := newHash(hashAt(0x30, 1), first)
		s.FirstSource = src
		if attempt > 0 {
			s.MetadataStatus, s.Attempts, s.LastAttempt, s.LastFailure, s.LastFailureAt = schema.StatusFailed, 1, attempt, failure, failedAt
			s.NextRetry = attempt + hour
		}
		return s
	}
	for _, tt := range []struct {
		name      string
		a, b      schema.State
		wantSrc   string
		wantFail  string
		wantFaiAt int64
	}{
		{"earlier first_seen", rec(t0, schema.SourceSampleInfohashes, 0, "", 0), rec(t0+hour, schema.SourceGetPeers, 0, "", 0),
			schema.SourceSampleInfohashes, "", 0},
		{"earlier, unknown", rec(t0, "", 0, "", 0), rec(t0+hour, schema.SourceGetPeers, 0, "", 0), "", "", 0},
		{"tie: the known one", rec(t0, "", 0, "", 0), rec(t0, schema.SourceGetPeers, 0, "", 0), schema.SourceGetPeers, "", 0},
		{"tie: the greater", rec(t0, schema.SourceGetPeers, 0, "", 0), rec(t0, schema.SourceSampleInfohashes, 0, "", 0),
			schema.SourceSampleInfohashes, "", 0},
		{"a null first_seen: the known one's", rec(0, "zz-crawler", 0, "", 0), rec(t0, schema.SourceGetPeers, 0, "", 0),
			schema.SourceGetPeers, "", 0},
		{"the later attempt's failure", rec(t0, "import", t0+hour, schema.OutcomeNoPeers, t0+hour),
			rec(t0, "import", t0+2*hour, schema.OutcomeTimeout, t0+90*minute), "import", schema.OutcomeTimeout, t0 + 90*minute},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, side := range [][2]schema.State{{tt.a, tt.b}, {tt.b, tt.a}} {
				got, _ := unionState(schedule.Default(), side[0], side[1], false)
				if got.FirstSource != tt.wantSrc || got.LastFailure != tt.wantFail || got.LastFailureAt != tt.wantFaiAt {
					t.Fatalf("first_source %q, last_failure %q at %d; want %q, %q at %d", got.FirstSource,
						got.LastFailure, got.LastFailureAt, tt.wantSrc, tt.wantFail, tt.wantFaiAt)
				}
			}
		})
	}
}
