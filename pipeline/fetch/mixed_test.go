package fetch

import (
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
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
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
	// Stalling peers end at the peer timeout; the generous job timeout
	// leaves lookups time to finish on a loaded machine (or under -race).
	o.Timeout, o.PeerTimeout = 20*time.Second, 2*time.Second
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
	if len(byClass) != 11 {
		t.Fatalf("only %d classes exercised: %v", len(byClass), byClass)
	}
	if st.Lookups != int64(len(jobs)) || st.LookupsFailed != 0 || st.Outcomes["ok"] != int64(byClass["ok"]) || st.Verified < st.Outcomes["ok"] {
		t.Fatalf("stats %+v", st)
	}
	var lk []int64
	for _, r := range res {
		lk = append(lk, r.LookupMs)
	}
	slices.Sort(lk)
	t.Logf("lookup ms p50 %d p90 %d p99 %d max %d", lk[len(lk)/2], lk[len(lk)*9/10], lk[len(lk)*99/100], lk[len(lk)-1])
	t.Logf("%d jobs, classes %v, %.0f verified/s", len(jobs), byClass, st.VerifiedPerSec)
}
