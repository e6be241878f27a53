package plan

import (
	"slices"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestJobsCarryTheStatePeers: a job's peers are its hash's (announced,
// newest first, in the state's order), less the endpoints penalised:
// those in its live avoid_peers and any other live penalty in peers/
// (fetch would skip them). An endpoint whose penalty is over is handed
// out again; a hash without peers gets an empty list.
func TestJobsCarryTheStatePeers(t *testing.T) {
	now := ms(t0) + day
	withPeers := failedHash(t, hashAt(1, 1), ms(t0), ms(t0))
	withPeers.Peers = []string{"10.0.0.1:1", "10.0.0.2:2", "10.0.0.3:3", "10.0.0.4:4", "10.0.0.5:5"}
	withPeers.AvoidPeers = []string{"10.0.0.2:2", "10.0.0.3:3"}
	fresh := newHash(hashAt(2, 2), ms(t0))
	fresh.Peers = []string{"10.0.0.9:9"}
	none := newHash(hashAt(3, 3), ms(t0))
	dir := makeDataset(t, []schema.State{withPeers, fresh, none}, nil)
	writePeers(t, dir, []schema.PeerPenalty{
		{Addr: "10.0.0.2:2", Class: schema.OutcomeNoExtension, Failures: 1, LastAt: now - hour, Until: now + day},     // live, the hash's
		{Addr: "10.0.0.3:3", Class: schema.OutcomeConnectFailed, Failures: 1, LastAt: ms(t0), Until: ms(t0) + minute}, // over
		{Addr: "10.0.0.4:4", Class: schema.OutcomeRejected, Failures: 1, LastAt: now - hour, Until: now + hour},       // live, another hash's
	})
	jobs, stats := runPlan(t, dir, now, 10, nil)
	want := map[schema.Hash][]string{
		withPeers.InfoHash: {"10.0.0.1:1", "10.0.0.3:3", "10.0.0.5:5"},
		fresh.InfoHash:     {"10.0.0.9:9"},
		none.InfoHash:      {},
	}
	if len(jobs) != len(want) {
		t.Fatalf("planned %d jobs, want %d", len(jobs), len(want))
	}
	for _, j := range jobs {
		if !slices.Equal(j.Peers, want[j.InfoHash]) || j.Peers == nil {
			t.Errorf("%s: peers %q, want %q", schema.Hex(j.InfoHash), j.Peers, want[j.InfoHash])
		}
	}
	if stats.JobPeers != 4 || stats.JobPeersAvoided != 2 {
		t.Errorf("job_peers %d, job_peers_avoided %d; want 4 and 2", stats.JobPeers, stats.JobPeersAvoided)
	}
}
