package fetch

import (
	"cmp"
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/tools/badpeers"
	"github.com/infohash/infohash/tools/testnet"
)

// startTestnet starts a loopback DHT testnet with a peer of every
// behaviour planted for perBehaviour hashes each.
func startTestnet(t *testing.T, cfg testnet.Config, perBehaviour int) *testnet.Net {
	t.Helper()
	// No deadline of its own: planting hundreds of hashes on a loaded
	// machine takes what it takes; go test's -timeout bounds it.
	ctx := t.Context()
	n, err := testnet.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	for bi, b := range badpeers.Behaviours() {
		p := startPeer(t, b)
		ts := make([]badpeers.Torrent, perBehaviour)
		for i := range ts {
			ts[i] = badpeers.NewTorrent(uint64(1000*(bi+1)+i), 2, 30+i)
		}
		if err := badpeers.Plant(ctx, n, p, ts); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// TestMixedRunThroughDHT: at least 500 jobs (good, dead, unknown and every
// misbehaviour), peers found only through the DHT, all classified as the
// testnet's ground truth says.
func TestMixedRunThroughDHT(t *testing.T) {
	per := 40
	if testing.Short() {
		per = 5
	}
	n := startTestnet(t, testnet.Config{Nodes: 16, Seeders: 2, Torrents: 40, Searched: 20, Dead: 10,
		Seed: 7, SearchEvery: -1, Reannounce: -1}, per)
	want := badpeers.Expected(n.Truth())
	var jobs []schema.Job
	for h := range want {
		ih, _, _, err := schema.ParseHex(h)
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, schema.Job{InfoHash: ih, HashType: schema.HashV1, Attempt: 1, LeaseID: "mixed"})
	}
	// Stalling peers' jobs first: they are the ones that wait out the
	// peer timeout, and started first they do it while the rest runs.
	slices.SortStableFunc(jobs, func(a, b schema.Job) int {
		return cmp.Compare(rankStall(want[schema.Hex(a.InfoHash)]), rankStall(want[schema.Hex(b.InfoHash)]))
	})
	if !testing.Short() && len(jobs) < 500 {
		t.Fatalf("only %d jobs", len(jobs))
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "jobs.parquet"), filepath.Join(dir, "results.parquet")
	writeRows(t, in, jobs)
	o := testOptions()
	o.Input, o.Output = in, out
	o.Bootstrap = n.BootstrapAddrs()
	o.Concurrency = 200
	// Every outcome must come from what the peers and nodes do, not from
	// how fast a loaded machine (or -race) runs them, so no timeout may
	// fire but the one the stalling peers are there to hit. Each testnet
	// node answers every query and each dial is answered or refused at
	// once, so queries wait for their answer and the job and dial
	// timeouts are only backstops: lookups end when the traversal runs
	// out of nodes to ask. With 2 s query and peer timeouts, answers that
	// came late under load (load average 16) failed whole lookups as
	// local_error and good peers as timeout.
	o.Timeout, o.DHTQueryTimeout, o.ConnectTimeout = 5*time.Minute, time.Minute, time.Minute
	// The peer timeout ends the stalling peers (timeout) and must not end
	// a good peer that answers slowly: 15 s, the default, is many times
	// what a loopback exchange needs even at load 16 under -race.
	o.PeerTimeout = 15 * time.Second
	st, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	res := readResults(t, out)
	if len(res) != len(jobs) {
		t.Fatalf("%d results for %d jobs", len(res), len(jobs))
	}
	wrong := 0
	byClass := map[string]int{}
	for _, j := range jobs {
		r := res[j.InfoHash]
		checkResult(t, j, r)
		w := want[schema.Hex(j.InfoHash)]
		byClass[w]++
		if r.Outcome != w {
			wrong++
			if wrong <= 10 {
				t.Errorf("%x: outcome %s (%s), ground truth %s", j.InfoHash, r.Outcome, r.Detail, w)
			}
		}
	}
	if wrong > 0 {
		t.Fatalf("%d of %d jobs misclassified", wrong, len(jobs))
	}
	if len(byClass) != 12 {
		t.Fatalf("only %d classes exercised: %v", len(byClass), byClass)
	}
	if st.Lookups != int64(len(jobs)) || st.LookupsFailed != 0 || st.Outcomes["ok"] != int64(byClass["ok"]) || st.Verified < st.Outcomes["ok"] {
		t.Fatalf("stats %+v", st)
	}
	var lk []int64
	for _, r := range res {
		if r.LookupMs == nil { // every job was looked up
			t.Fatalf("%x (%s): lookup_ms null after a DHT lookup", r.InfoHash, r.Outcome)
		}
		lk = append(lk, *r.LookupMs)
	}
	slices.Sort(lk)
	t.Logf("lookup ms p50 %d p90 %d p99 %d max %d", lk[len(lk)/2], lk[len(lk)*9/10], lk[len(lk)*99/100], lk[len(lk)-1])
	t.Logf("%d jobs, classes %v, %.0f ok/s", len(jobs), byClass, st.OKPerSec)
}

// rankStall orders the jobs whose only peer stalls before the others.
func rankStall(outcome string) int {
	if outcome == badpeers.Stall.Expect() {
		return 0
	}
	return 1
}
