package merge

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/dedup"
	"github.com/infohash/infohash/pipeline/plan"
	"github.com/infohash/infohash/pipeline/schedule"
)

// simClasses are the failure classes the simulation's hashes fail with,
// one class per hash for its whole life: two swarm classes, two
// peer-level ones and both bad-metadata ones.
var simClasses = []string{schema.OutcomeNoPeers, schema.OutcomeConnectFailed, schema.OutcomeNoExtension,
	schema.OutcomeRejected, schema.OutcomeInvalidMetadata, schema.OutcomeHashMismatch}

// simHash is what the simulation knows of one hash.
type simHash struct {
	class    string
	attempts []int64 // times of the attempts merged under their lease
	delays   []int64 // next_retry - last_attempt after each of them
	dueAt    int64   // next_retry at the last state read (0: null)
	dues     []int64 // dueAt when each attempt was planned
	tier     string  // at the last state read
	wasCold  bool    // went cold once
}

// sim drives plan-retries → a fetch that fails every hash with its class
// → merge, pass after pass, on one dataset.
type sim struct {
	t      *testing.T
	dir    string
	rng    *rand.Rand
	limit  int
	hashes map[schema.Hash]*simHash
	peer   int // the last synthetic endpoint handed out
}

// newSim makes a dataset of n never-tried hashes, the i-th seen at
// seen(i), for a simulation planning limit jobs a pass.
func newSim(t *testing.T, n, limit int, seen func(i int) int64) *sim {
	s := &sim{t: t, rng: rand.New(rand.NewPCG(18, 2026)), limit: limit, hashes: map[schema.Hash]*simHash{}}
	var states []schema.State
	for i, h := range s.fresh(n) {
		states = append(states, newHash(h, seen(i)))
	}
	s.dir = makeDataset(t, states)
	p := schedule.Default()
	p.Plan.ColdPartitions = 256 // every pass sweeps the whole cold tier: passes here run only when needed
	if err := schedule.Save(s.dir, p); err != nil {
		t.Fatal(err)
	}
	s.observe()
	return s
}

// fresh makes n new random hashes, each given the next class in turn.
func (s *sim) fresh(n int) []schema.Hash {
	var out []schema.Hash
	for range n {
		var h schema.Hash
		for i := range h {
			h[i] = byte(s.rng.UintN(256))
		}
		h[0] &= 1 // two partitions: fewer files for every pass to open
		s.hashes[h] = &simHash{class: simClasses[len(s.hashes)%len(simClasses)]}
		out = append(out, h)
	}
	return out
}

// plan runs plan-retries at now.
func (s *sim) plan(now int64) ([]schema.Job, plan.Stats) {
	s.t.Helper()
	o := plan.DefaultOptions()
	o.Data, o.Now, o.Limit, o.Workers = s.dir, tm(now), s.limit, 1
	o.Output = filepath.Join(s.t.TempDir(), "jobs.parquet")
	st, err := plan.Run(context.Background(), o)
	if err != nil {
		s.t.Fatalf("plan-retries at %s: %v", tm(now), err)
	}
	return readAll[schema.Job](s.t, o.Output), st
}

// fail answers job j as fetch would for a hash failing with its class
// at at: a peer-level or bad-metadata failure names one endpoint, never
// the same twice (each attempt finds a fresh peer).
func (s *sim) fail(j schema.Job, at int64) schema.Result {
	class := s.hashes[j.InfoHash].class
	r := failure(j, class, at)
	if schedule.KindOf(class) != schedule.KindSwarm {
		s.peer++
		addr := fmt.Sprintf("127.%d.%d.%d:6881", s.peer>>16&255, s.peer>>8&255, s.peer&255)
		r.PeerFailures = []schema.PeerFailure{{Addr: addr, Class: class, At: at}}
		r.PeersFound, r.PeersTried = 1, 1
	}
	return r
}

// merge applies rs at now and records the attempts that counted.
func (s *sim) merge(now int64, rs []schema.Result) Stats {
	s.t.Helper()
	st := runMerge(s.t, s.dir, now, writeResults(s.t, rs))
	s.observe()
	return st
}

// observe reads the state: every hash is still there; the attempts it
// counts are the ones the simulation saw counted.
func (s *sim) observe() map[schema.Hash]schema.State {
	s.t.Helper()
	state := map[schema.Hash]schema.State{}
	files, _ := filepath.Glob(filepath.Join(s.dir, dataset.TableState, "current", "prefix=*", "*.parquet"))
	for _, f := range files {
		rows, err := dataset.ReadFile[schema.State](f)
		if err != nil {
			s.t.Fatal(err)
		}
		for _, st := range rows {
			state[st.InfoHash] = st
		}
	}
	if len(state) != len(s.hashes) {
		s.t.Fatalf("state holds %d hashes, want %d: none is ever deleted", len(state), len(s.hashes))
	}
	for h, sh := range s.hashes {
		st, ok := state[h]
		if !ok {
			s.t.Fatalf("%s is gone from the state", schema.Hex(h))
		}
		if int(st.Attempts) != len(sh.attempts) {
			s.t.Fatalf("%s counts %d attempts, %d were made and merged under their lease",
				schema.Hex(h), st.Attempts, len(sh.attempts))
		}
		if n := len(sh.attempts); n > len(sh.delays) && st.LastAttempt > 0 {
			sh.delays = append(sh.delays, st.NextRetry-st.LastAttempt)
		}
		sh.dueAt = st.NextRetry
		sh.tier = st.Tier
		sh.wasCold = sh.wasCold || st.Tier == schema.TierCold
	}
	return state
}

// sight has dedup apply a get_peers sighting of each of hs at at, the
// reactivation rule bound to the dataset's policy.
func (s *sim) sight(hs []schema.Hash, at int64) dedup.Stats {
	s.t.Helper()
	obs := make([]schema.Observation, len(hs))
	for i, h := range hs {
		obs[i] = schema.Observation{InfoHash: h, HashType: schema.HashV1, ObservedAt: at, Source: schema.SourceGetPeers}
	}
	path := filepath.Join(s.t.TempDir(), "obs.parquet")
	w, err := rowio.Create[schema.Observation](path, nil)
	if err == nil {
		err = w.Write(obs)
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		s.t.Fatal(err)
	}
	p, err := schedule.Load(s.dir)
	if err != nil {
		s.t.Fatal(err)
	}
	o := dedup.DefaultOptions()
	o.Data, o.Inputs, o.Now = s.dir, []string{path}, tm(at)
	o.Reactivate = func(st *schema.State, at, announcedAt int64) bool { return schedule.Reactivate(p, st, at, announcedAt) }
	st, err := dedup.Run(context.Background(), o)
	if err != nil {
		s.t.Fatalf("dedup: %v", err)
	}
	s.observe()
	return st
}

// next is the first hour after now at which a hash falls due or a lease
// ends (now+1h while planned passes left due hashes behind), at most
// until.
func (s *sim) next(now, until int64, backlog bool) int64 {
	if backlog {
		return now + hour
	}
	next := until
	for _, sh := range s.hashes {
		next = min(next, sh.dueAt)
	}
	if next <= now {
		return now + hour
	}
	return now + (next-now+hour-1)/hour*hour
}

// countAttempt records job j's attempt at at (planned then: the job's
// due time is when it was due), checking it came no sooner than that.
func (s *sim) countAttempt(j schema.Job, at int64) {
	sh := s.hashes[j.InfoHash]
	if sh.dueAt > at {
		s.t.Fatalf("%s planned at %s, before its next_retry %s", schema.Hex(j.InfoHash), tm(at), tm(sh.dueAt))
	}
	sh.dues = append(sh.dues, sh.dueAt)
	sh.attempts = append(sh.attempts, at)
}

// newQuota is the least number of new jobs a pass of limit jobs owes
// never-tried hashes (PlanRule.NewShare), dueNew of them due, other
// tiers due too when others.
func newQuota(limit int, share float64, dueNew int64, others bool) int {
	q := int(min(dueNew, int64(max(1, int(float64(limit)*share+0.999999)))))
	if others && q >= limit && limit >= 2 {
		q = limit - 1
	}
	return q
}
