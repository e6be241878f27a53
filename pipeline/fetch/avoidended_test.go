package fetch

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/tools/badpeers"
)

// TestEndedAvoidPeerIsDialled: a job's avoid_peers entry whose penalty
// the jobs file's avoid list dates as ended (it ended between plan and
// fetch: the planner hands a job only live penalties) is dialled, as the
// next plan would hand it; it was skipped, and a job with no other peer
// ended rejected, a failure counted against a hash nobody was dialled
// for. An entry whose penalty still runs is skipped (peers_penalised,
// retry_after its end), beside an ended one too.
func TestEndedAvoidPeerIsDialled(t *testing.T) {
	tor := badpeers.NewTorrent(13, 1, 10)
	good := startPeer(t, badpeers.Good, tor)
	const penalised = "127.0.0.1:7301" // never dialled
	now := time.Now()
	ended, runs := now.Add(-time.Minute).UnixMilli(), now.Add(time.Hour).UnixMilli()
	for _, tt := range []struct {
		name       string
		list       []schema.AvoidedPeer
		peers      []string
		outcome    string
		connects   int64
		avoided    int64
		retryAfter int64
	}{
		{"ended since the plan", []schema.AvoidedPeer{{Addr: good.Addr(), Until: ended}},
			[]string{good.Addr()}, schema.OutcomeOK, 1, 0, 0},
		{"ended, beside a running penalty", []schema.AvoidedPeer{{Addr: good.Addr(), Until: ended}, {Addr: penalised, Until: runs}},
			[]string{penalised, good.Addr()}, schema.OutcomeOK, 1, 1, 0},
		{"still running", []schema.AvoidedPeer{{Addr: good.Addr(), Until: runs}},
			[]string{good.Addr()}, schema.OutcomePeersPenalised, 0, 1, runs},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "jobs.parquet")
			avoid, _ := schema.EncodeAvoidPeers(tt.list)
			job := schema.Job{InfoHash: tor.InfoHash, HashType: schema.HashV1, Peers: tt.peers, AvoidPeers: tt.peers}
			writeJobsWithAvoid(t, in, nil, []schema.Job{job}, avoid)
			o := testOptions()
			o.Input, o.Output = in, filepath.Join(dir, "results.parquet")
			st, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			r := readResults(t, o.Output)[tor.InfoHash]
			if r.Outcome != tt.outcome || st.Connects != tt.connects || st.PeersAvoided != tt.avoided || r.RetryAfter != tt.retryAfter {
				t.Fatalf("outcome %s (%s), connects %d, peers_avoided %d, retry_after %d; want %s, %d, %d, %d",
					r.Outcome, r.Detail, st.Connects, st.PeersAvoided, r.RetryAfter, tt.outcome, tt.connects, tt.avoided, tt.retryAfter)
			}
			if tt.outcome == schema.OutcomePeersPenalised && !strings.Contains(r.Detail, "the first penalty ends at") {
				t.Errorf("detail %q; want it to say when the penalty ends", r.Detail)
			}
		})
	}
}
