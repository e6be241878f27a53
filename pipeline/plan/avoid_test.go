package plan

import (
	"context"
	"slices"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// writePeers commits rows as the dataset's peers table.
func writePeers(t *testing.T, dir string, rows []schema.PeerPenalty) {
	t.Helper()
	d, err := dataset.Open(context.Background(), dir, dataset.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	fi, err := dataset.WriteStaged(tx, dataset.TablePeers, "", rows)
	if err != nil {
		t.Fatal(err)
	}
	tx.SetPartition(dataset.TablePeers, "", []dataset.FileInfo{fi})
	if _, err := tx.Commit(context.Background(), dataset.CommitOptions{Writer: "test"}); err != nil {
		t.Fatal(err)
	}
}

func TestJobsAvoidOnlyLivePenalties(t *testing.T) {
	now := ms(t0) + day
	st := failedHash(t, hashAt(1, 1), ms(t0), ms(t0))
	st.AvoidPeers = []string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"}
	dir := makeDataset(t, []schema.State{st}, nil)
	writePeers(t, dir, []schema.PeerPenalty{
		{Addr: "127.0.0.1:1", Class: schema.OutcomeNoExtension, Failures: 1, LastAt: now - hour, Until: now + 6*day},
		// A 10-minute connect_failed penalty, long over by the next
		// attempt: the hash's only known peer must be tried again.
		{Addr: "127.0.0.1:2", Class: schema.OutcomeConnectFailed, Failures: 1, LastAt: ms(t0), Until: ms(t0) + 10*minute},
		// 127.0.0.1:3 is no longer in peers/ (merge forgot it).
	})
	jobs, stats := runPlan(t, dir, now, 10, nil)
	if len(jobs) != 1 {
		t.Fatalf("planned %d jobs, want 1", len(jobs))
	}
	if got := jobs[0].AvoidPeers; !slices.Equal(got, []string{"127.0.0.1:1"}) {
		t.Errorf("job avoid_peers = %v, want only the endpoint still penalised", got)
	}
	if stats.AvoidExpired != 2 || stats.PenaltiesLive != 1 {
		t.Errorf("avoid_peers_expired %d, peer_penalties_live %d; want 2 and 1", stats.AvoidExpired, stats.PenaltiesLive)
	}
}
