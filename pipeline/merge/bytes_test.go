package merge

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/goldentest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestMergeBytesMatchGolden merges a few thousand results, in two inputs,
// into a state planned by plan-retries, and pins the snapshot committed
// byte for byte: the SHA-256 of every file but the ledger's (testdata/bytes/, rewritten by
// go test -run TestMergeBytesMatchGolden -update). The results hold what
// merge orders (sortResults): several attempts under one lease, some at
// the same time (input order decides), released rows before and after
// an attempt, results under a stale lease, peer failures, ok results (of
// leased hashes and of hashes the state lacks). However merge holds and
// sorts its rows, the files must not change.
func TestMergeBytesMatchGolden(t *testing.T) {
	var states []schema.State
	var infos [][]byte
	for i := range 3000 {
		states = append(states, newHash(hashAt(byte(i%97), uint64(i)), t0-day))
	}
	for i := range 60 { // hashes whose metadata the results serve
		info, h := torrentInfo(fmt.Sprintf("golden-%d", i))
		infos = append(infos, info)
		states = append(states, newHash(h, t0-day))
	}
	dir := makeDataset(t, states)
	datasettest.SetDatasetID(t, dir, "00000000000000d2") // the jobs' lease IDs name it: the same in every run
	jobs := planJobs(t, dir, t0, 2800)
	byHash := map[schema.Hash][]byte{}
	for i, info := range infos {
		_, h := torrentInfo(fmt.Sprintf("golden-%d", i))
		byHash[h] = info
	}
	r := rand.New(rand.NewPCG(5, 6))
	var rs []schema.Result
	for i, j := range jobs {
		at := t0 + hour + r.Int64N(30)*minute
		switch {
		case byHash[j.InfoHash] != nil:
			rs = append(rs, success(j, byHash[j.InfoHash], at))
		case i%10 == 0:
			addr := fmt.Sprintf("10.%d.%d.1:6881", i%7, i%251)
			rs = append(rs, failure(j, schema.OutcomeNoUTMetadata, at, schema.PeerFailure{Addr: addr, Class: schema.OutcomeNoUTMetadata, At: at}))
		case i%13 == 0: // released, then attempted (the attempt counts)
			rs = append(rs, released(j, at), failure(j, schema.OutcomeNoPeers, at))
		case i%17 == 0: // two attempts at the same time: input order decides
			rs = append(rs, failure(j, schema.OutcomeNoPeers, at), failure(j, schema.OutcomeTimeout, at))
		case i%19 == 0: // attempted twice, the later one first
			rs = append(rs, failure(j, schema.OutcomeNoPeers, at+minute), failure(j, schema.OutcomeTimeout, at))
		case i%23 == 0:
			rs = append(rs, released(j, at))
		case i%29 == 0: // under a stale lease
			stale := j
			stale.LeaseID = "Lstale"
			rs = append(rs, failure(stale, schema.OutcomeNoPeers, at))
		case i%31 == 0: // not answered: stays leased
		default:
			rs = append(rs, failure(j, schema.OutcomeNoPeers, at))
		}
	}
	for i := range 40 { // ok results of hashes the state lacks
		info, h := torrentInfo(fmt.Sprintf("unknown-%d", i))
		rs = append(rs, success(schema.Job{InfoHash: h, HashType: schema.HashV1, Attempt: 1}, info, t0+2*hour))
	}
	half := len(rs) / 2
	first, second := writeResults(t, rs[:half]), writeResults(t, rs[half:])
	st := runMerge(t, dir, t0+3*hour, first, second)
	if st.Applied == 0 || st.Stored == 0 || st.LeasesReleased == 0 || st.StaleFailures+st.LateFailures == 0 {
		t.Fatalf("the merge applied %d failures, stored %d, released %d leases and ignored %d stale or late failures: want some of each",
			st.Applied, st.Stored, st.LeasesReleased, st.StaleFailures+st.LateFailures)
	}
	// The ledger names the inputs by their paths, temporary folders.
	var kept []string
	for _, l := range strings.SplitAfter(datasettest.Digests(t, dir), "\n") {
		if !strings.HasPrefix(l, "ledger ") {
			kept = append(kept, l)
		}
	}
	got := strings.Join(kept, "")
	goldentest.Check(t, filepath.Join("testdata", "bytes", "merge.golden"), []byte(got), *update)
}
