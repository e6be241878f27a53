package plan

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/leases"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/goldentest"
	"github.com/infohash/infohash/pipeline/schedule"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// randomStates returns n states spread over the partitions, of every
// kind the planner tells apart: new, retried, reactivated, cold (due or
// not), fetched, not yet due, leased (live or expired), with peers,
// avoid lists and v2 hashes; and the lease rows of the leased ones.
func randomStates(t *testing.T, seed uint64, n int) ([]schema.State, []schema.Lease) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	now := ms(t0) + 30*day
	var states []schema.State
	var ls []schema.Lease
	for i := range n {
		h := hashAt(byte(r.IntN(40)), uint64(i)) // 40 partitions: some in each cold window
		seen := ms(t0) + r.Int64N(20)*day
		st := newHash(h, seen)
		st.Activity = []float64{0, 0.5, 1, 3, 100}[r.IntN(5)]
		st.LastSeen = seen + r.Int64N(9)*day
		switch r.IntN(10) {
		case 0, 1, 2: // new
		case 3, 4, 5: // retried: due or not
			st = failedHash(t, h, seen, now-r.Int64N(3)*day)
			st.Activity = float64(r.IntN(4))
			st.Attempts = int32(r.IntN(4)) + 1
		case 6: // reactivated
			st = failedHash(t, h, seen, now-5*day)
			st.Reactivated = st.LastAttempt + r.Int64N(3*day)
		case 7: // cold
			st = failedHash(t, h, seen, now-r.Int64N(60)*day)
			st.Tier = schema.TierCold
		case 8:
			st.MetadataStatus = schema.StatusFetched
		case 9: // leased: live or expired
			until := now + (r.Int64N(3)-1)*hour
			ls = append(ls, schema.Lease{InfoHash: h, LeaseID: fmt.Sprintf("L%d", i), LeaseUntil: until, Attempt: 1,
				Reason: schema.ReasonNew, PlannedAt: until - 2*hour})
		}
		if r.IntN(4) == 0 {
			st.Peers = []string{fmt.Sprintf("10.0.%d.%d:6881", i%250, r.IntN(250))}
		}
		if r.IntN(5) == 0 {
			st.AvoidPeers = []string{fmt.Sprintf("10.1.%d.1:6881", i%250)}
		}
		if r.IntN(8) == 0 {
			st.HashType = schema.HashV2
			st.InfoHashV2 = append(h[:], bytes.Repeat([]byte{byte(i)}, 12)...)
		}
		states = append(states, st)
	}
	return states, ls
}

// TestSelectionMatchesGolden plans random states under several policies,
// shares and limits (some above the due set) and compares the jobs file
// and the leases committed with golden files written by the planner
// that kept a full --limit of candidates per pool and per worker: the
// jobs chosen, their order and their leases must not change with how
// candidates are kept. Every prefix of the jobs also holds each pool's
// share (checkPrefixShares). go test -run TestSelectionMatchesGolden
// -update rewrites them.
func TestSelectionMatchesGolden(t *testing.T) {
	half, none, all := 0.5, 0.0, 1.0
	for _, tc := range []struct {
		name      string
		seed      uint64
		n         int
		coldShare float64
		coldParts int
		newShare  *float64
	}{
		{"default", 1, 900, 0.02, 16, nil},
		{"wide-cold", 2, 900, 0.3, 256, nil},
		{"no-new-share", 3, 700, 0.1, 32, &none},
		{"all-new-share", 4, 700, 0.05, 256, &all},
		{"half", 5, 900, 1, 128, &half},
	} {
		states, ls := randomStates(t, tc.seed, tc.n)
		built := makeDataset(t, states, ls)
		p := schedule.Default()
		p.Plan.ColdShare, p.Plan.ColdPartitions = tc.coldShare, tc.coldParts
		if err := schedule.Save(built, p); err != nil {
			t.Fatal(err)
		}
		for _, limit := range []int{1, 17, 150, 5000} {
			for _, workers := range []int{1, 3} {
				name := fmt.Sprintf("%s/limit=%d/workers=%d", tc.name, limit, workers)
				t.Run(name, func(t *testing.T) {
					dir := filepath.Join(t.TempDir(), "ds")
					datasettest.CopyAsMoved(t, built, dir) // the same dataset in every case
					jobs, _ := runPlan(t, dir, ms(t0)+30*day, limit, func(o *Options) {
						o.NewShare, o.Workers = tc.newShare, workers
					})
					checkPrefixShares(t, jobs)
					got := describe(t, dir, jobs)
					// Every worker count picks alike: one golden file.
					golden := filepath.Join("testdata", "selection", fmt.Sprintf("%s-limit%d.golden", tc.name, limit))
					goldentest.Check(t, golden, got, *update && workers == 1)
				})
			}
		}
	}
}

// describe renders jobs, in order, and the dataset's leases after the
// run, sorted by hash, one per line. A lease ID is shown without the
// dataset's id (drawn at random when the test makes it), which it must
// name.
func describe(t *testing.T, dir string, jobs []schema.Job) []byte {
	t.Helper()
	d, m := datasettest.OpenCurrent(t, dir)
	defer d.Close()
	pass := func(id string) string {
		if ds := leases.Dataset(id); ds != m.DatasetID {
			t.Fatalf("lease_id %s names dataset %q, not the one planned (%s)", id, ds, m.DatasetID)
		}
		return strings.TrimSuffix(id, "-"+m.DatasetID)
	}
	var b bytes.Buffer
	for _, j := range jobs {
		fmt.Fprintf(&b, "job %x v2=%x type=%d attempt=%d %s %s %d peers=%q avoid=%q\n", j.InfoHash, j.InfoHashV2,
			j.HashType, j.Attempt, j.Reason, pass(j.LeaseID), j.LeaseUntil, j.Peers, j.AvoidPeers)
	}
	set, err := leases.Read(d, m)
	if err != nil {
		t.Fatal(err)
	}
	var rows []schema.Lease
	for _, l := range set {
		rows = append(rows, l)
	}
	slices.SortFunc(rows, func(a, b schema.Lease) int { return bytes.Compare(a.InfoHash[:], b.InfoHash[:]) })
	for _, l := range rows {
		fmt.Fprintf(&b, "lease %x %s %d attempt=%d %s planned=%d\n", l.InfoHash, strings.TrimSuffix(l.LeaseID, "-"+m.DatasetID), l.LeaseUntil, l.Attempt,
			l.Reason, l.PlannedAt)
	}
	return b.Bytes()
}
