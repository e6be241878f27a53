package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

const (
	minute = int64(60 * 1000)
	hour   = 60 * minute
	day    = 24 * hour
)

// classes are the failure classes a hash fails with: classes[h[19] % 6].
var classes = []string{schema.OutcomeNoPeers, schema.OutcomeConnectFailed, schema.OutcomeNoExtension,
	schema.OutcomeRejected, schema.OutcomeInvalidMetadata, schema.OutcomeHashMismatch}

func classOf(h schema.Hash) string { return classes[int(h[19])%len(classes)] }

type config struct {
	bin, work, tsv, start     string
	policy                    string
	n, days, limit            int
	flood, sight              int
	every                     time.Duration
	crashAt, downFrom, downTo time.Duration
	sightAt                   time.Duration
	seed                      uint64
	t0                        int64
}

// hashInfo is what the simulation knows of one hash.
type hashInfo struct {
	counted int   // attempts merged under their lease
	dueAt   int64 // next_retry at the last state read
	cold    bool  // tier at the last state read
}

// lag is how long after its next_retry a hash was planned.
type lag struct {
	class string
	cold  bool // planned from the cold tier (reason cold)
	due   int64
	ms    int64
}

type sim struct {
	c      config
	dir    string
	rng    *rand.Rand
	peer   int
	hashes map[schema.Hash]*hashInfo
	passes int
	wake   map[int64]float64 // next_retry hour (from t0) of each retry set
	ideal  map[int64]float64 // the same, each spread evenly over its jitter window
	lags   []lag
	tsv    *os.File
	errs   []string
	crash  struct{ at, leaseUntil, replannedBy int64 }
	late   []schema.Result
	// crashCounted: the attempts each crashed job's hash counted then
	crashCounted map[schema.Hash]int
	sighted      map[schema.Hash]int64 // when each sighted cold hash was planned next (0: not yet)
	sightT       int64
	sightOK      int // of them, the ones whose retry the sighting pulled forward
}

func newSim(c config) *sim {
	return &sim{c: c, dir: filepath.Join(c.work, "ds"), rng: rand.New(rand.NewPCG(c.seed, 18)),
		hashes: map[schema.Hash]*hashInfo{}, wake: map[int64]float64{}, ideal: map[int64]float64{}}
}

func (s *sim) failf(format string, args ...any) {
	if len(s.errs) < 20 {
		fmt.Fprintf(os.Stderr, "schedsim: "+format+"\n", args...)
	}
	s.errs = append(s.errs, fmt.Sprintf(format, args...))
}

// ih runs the binary with args.
func (s *sim) ih(args ...string) error {
	cmd := exec.Command(s.c.bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("schedsim: infohash %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return nil
}

func rfc(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339) }

// sightList has dedup fold in a sighting of each of hs at now (a text
// list, as a crawler's import).
func (s *sim) sightList(hs []schema.Hash, now int64) error {
	var b strings.Builder
	for _, h := range hs {
		b.WriteString(schema.Hex(h) + "\n")
	}
	path := filepath.Join(s.c.work, "sight.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return err
	}
	defer os.Remove(path)
	return s.ih("dedup", "--data", s.dir, "--now", rfc(now), path)
}

// fresh makes n new hashes.
func (s *sim) fresh(n int) []schema.Hash {
	out := make([]schema.Hash, 0, n)
	for len(out) < n {
		var h schema.Hash
		for i := range h {
			h[i] = byte(s.rng.UintN(256))
		}
		if _, ok := s.hashes[h]; !ok {
			s.hashes[h] = &hashInfo{}
			out = append(out, h)
		}
	}
	return out
}

// readJSON reads a --stats-json file.
func readJSON(path string) (map[string]float64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	raw := map[string]any{}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("schedsim: %s: %w", path, err)
	}
	out := map[string]float64{}
	for k, v := range raw {
		if f, ok := v.(float64); ok {
			out[k] = f
		}
	}
	return out, nil
}

// answer is the result of a fetch of job j that fails at at with the
// hash's class: a peer-level or bad-metadata failure names one endpoint,
// a new one each time (each attempt finds another peer).
func (s *sim) answer(j schema.Job, at int64) schema.Result {
	class := classOf(j.InfoHash)
	r := schema.Result{InfoHash: j.InfoHash, HashType: j.HashType, Attempt: j.Attempt, LeaseID: j.LeaseID,
		AttemptedAt: at, Outcome: class, PeerFailures: []schema.PeerFailure{}}
	if schedule.KindOf(class) != schedule.KindSwarm {
		s.peer++
		addr := fmt.Sprintf("10.%d.%d.%d:6881", s.peer>>16&255, s.peer>>8&255, s.peer&255)
		r.PeerFailures = []schema.PeerFailure{{Addr: addr, Class: class, At: at}}
		r.PeersFound, r.PeersTried = 1, 1
	}
	return r
}

func writeResults(path string, rs []schema.Result) error {
	w, err := rowio.Create[schema.Result](path, nil)
	if err != nil {
		return err
	}
	if err := w.Write(rs); err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}

// readState reads every state row; it checks none is lost and each
// counts the attempts merged under their lease, and notes next_retry
// and tier.
func (s *sim) readState(now int64) error {
	files, err := filepath.Glob(filepath.Join(s.dir, dataset.TableState, "current", "prefix=*", "*.parquet"))
	if err != nil {
		return err
	}
	rows := 0
	for _, f := range files {
		sts, err := dataset.ReadFile[schema.State](f)
		if err != nil {
			return err
		}
		for _, st := range sts {
			rows++
			hi, ok := s.hashes[st.InfoHash]
			if !ok {
				s.failf("%s: unknown hash %s in the state", rfc(now), schema.Hex(st.InfoHash))
				continue
			}
			if int(st.Attempts) != hi.counted {
				s.failf("%s: %s counts %d attempts, %d were merged under their lease", rfc(now),
					schema.Hex(st.InfoHash), st.Attempts, hi.counted)
				hi.counted = int(st.Attempts)
			}
			hi.dueAt, hi.cold = st.NextRetry, st.Tier == schema.TierCold
		}
	}
	if rows != len(s.hashes) {
		s.failf("%s: the state holds %d hashes, want %d (none is ever deleted)", rfc(now), rows, len(s.hashes))
	}
	return nil
}

// newQuota is the least number of jobs plan-retries owes never-tried
// hashes (plan.new_share 0.5: ceil(limit/2), at most those due; at most
// limit-1 when other tiers have due hashes).
func newQuota(limit int, dueNew float64, others bool) int {
	q := min(int(dueNew), max(1, (limit+1)/2))
	if others && q >= limit && limit >= 2 {
		q = limit - 1
	}
	return q
}

// down reports whether the scheduler is down at now.
func (s *sim) down(now int64) bool {
	return now >= s.c.t0+s.c.downFrom.Milliseconds() && now < s.c.t0+s.c.downTo.Milliseconds()
}

// coldHashes returns up to n cold hashes, in hash order.
func (s *sim) coldHashes(n int) []schema.Hash {
	var out []schema.Hash
	for h, hi := range s.hashes {
		if hi.cold {
			out = append(out, h)
		}
	}
	slices.SortFunc(out, func(a, b schema.Hash) int { return bytes.Compare(a[:], b[:]) })
	return out[:min(n, len(out))]
}

// nominal are the policy's delays (schedule steps, retry_soon, the bad
// metadata waits): far enough apart that a jittered delay (±20%) falls
// in one window only.
var nominal = []time.Duration{10 * time.Minute, 30 * time.Minute, 2 * time.Hour, 8 * time.Hour,
	24 * time.Hour, 7 * 24 * time.Hour, 30 * 24 * time.Hour}

// noteWake counts a retry set at due after an attempt at at, in its hour,
// and spreads one over the hours of its jitter window for the ideal: the
// delay's nominal value ±jitter, evenly. Only delays of a day or more
// count: shorter ones wake within a pass or two whatever the jitter.
func (s *sim) noteWake(at, due int64) {
	const jitter = 0.2
	d := due - at
	if d < day-day/4 {
		return
	}
	s.wake[(due-s.c.t0)/hour]++
	for _, n := range nominal {
		ms := n.Milliseconds()
		lo, hi := at+int64(float64(ms)*(1-jitter)), at+int64(float64(ms)*(1+jitter))
		if d < int64(float64(ms)*(1-jitter))-1 || d > int64(float64(ms)*(1+jitter))+1 {
			continue
		}
		for h := (lo - s.c.t0) / hour; h <= (hi-s.c.t0)/hour; h++ {
			a, b := max(lo, s.c.t0+h*hour), min(hi, s.c.t0+(h+1)*hour)
			if b > a {
				s.ideal[h] += float64(b-a) / float64(hi-lo)
			}
		}
		return
	}
	s.failf("a retry %s after its attempt matches no delay of the policy ±20%%", time.Duration(d)*time.Millisecond)
}
