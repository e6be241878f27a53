package plan

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/leases"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/goldentest"
)

// TestPlanBytesMatchGolden plans a few thousand random states whose
// lease table mixes live leases, leases ended within the grace (relet),
// leases past it (pruned) and leases of hashes the state lacks, and
// pins the output byte for byte: the SHA-256 of the jobs file and of
// every file of the snapshot committed (testdata/bytes/, rewritten by
// go test -run TestPlanBytesMatchGolden -update). Whatever way the
// leases are collected and written, the files must not change. It also
// checks the lease table row by row, in file order, against the old
// leases left (not pruned, not replanned) and the new ones, by hash.
func TestPlanBytesMatchGolden(t *testing.T) {
	now := ms(t0) + 30*day
	states, ls := randomStates(t, 11, 4000)
	for i := range 300 { // past the grace: pruned; and of hashes not in the state
		h := hashAt(byte(i%40), uint64(100_000+i))
		until := now + 5*hour
		if i%2 == 0 {
			until = now - leases.Grace - day
		}
		ls = append(ls, schema.Lease{InfoHash: h, LeaseID: "Lold", LeaseUntil: until, Attempt: 3,
			Reason: schema.ReasonRetry, PlannedAt: until - 2*hour})
	}
	built := makeDataset(t, states, ls)
	for _, limit := range []int{40, 3000} {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ds")
			datasettest.CopyAsMoved(t, built, dir) // the same dataset in every case
			var out string
			jobs, _ := runPlan(t, dir, now, limit, func(o *Options) {
				o.Workers, out = 2, o.Output
			})
			if len(jobs) == 0 || len(jobs) > limit {
				t.Fatalf("planned %d jobs at --limit %d", len(jobs), limit)
			}
			checkLeaseRows(t, dir, ls, jobs, now)
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("jobs rows=%d %x\n%s", len(jobs), sha256.Sum256(b), datasettest.Digests(t, dir))
			goldentest.Check(t, filepath.Join("testdata", "bytes", fmt.Sprintf("plan-limit%d.golden", limit)), []byte(got), *update)
		})
	}
}

// checkLeaseRows checks the lease table of dir's current snapshot, row by
// row in file order: the old leases not past the grace at now and not
// replanned, and a lease for every job, sorted by hash.
func checkLeaseRows(t *testing.T, dir string, old []schema.Lease, jobs []schema.Job, now int64) {
	t.Helper()
	byHash := map[schema.Hash]schema.Lease{}
	for _, l := range old {
		if !leases.Expired(l, now) {
			byHash[l.InfoHash] = l
		}
	}
	for _, j := range jobs {
		byHash[j.InfoHash] = schema.Lease{InfoHash: j.InfoHash, LeaseID: j.LeaseID, LeaseUntil: j.LeaseUntil,
			Attempt: j.Attempt, Reason: j.Reason, PlannedAt: now}
	}
	want := make([]schema.Lease, 0, len(byHash))
	for _, l := range byHash {
		want = append(want, l)
	}
	slices.SortFunc(want, func(a, b schema.Lease) int { return bytes.Compare(a.InfoHash[:], b.InfoHash[:]) })
	d, m := datasettest.OpenCurrent(t, dir)
	defer d.Close()
	got, err := dataset.ReadPartition[schema.Lease](d, m.Table(dataset.TableLeases), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("the lease table holds %d rows, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("lease row %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}
