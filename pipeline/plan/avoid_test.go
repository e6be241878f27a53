package plan

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/rowio"
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

func TestJobsFileCarriesTheLivePenalties(t *testing.T) {
	now := ms(t0) + day
	dir := makeDataset(t, []schema.State{newHash(hashAt(1, 1), ms(t0)), newHash(hashAt(2, 2), ms(t0))}, nil)
	writePeers(t, dir, []schema.PeerPenalty{
		{Addr: "127.0.0.1:1", Class: schema.OutcomeNoExtension, Failures: 1, Until: now + 6*day},
		{Addr: "127.0.0.1:2", Class: schema.OutcomeRejected, Failures: 1, Until: now + hour},
		{Addr: "127.0.0.1:3", Class: schema.OutcomeTimeout, Failures: 1, Until: now - minute}, // over
	})
	want := []schema.AvoidedPeer{{Addr: "127.0.0.1:1", Until: now + 6*day}, {Addr: "127.0.0.1:2", Until: now + hour}}
	for _, out := range []string{"parquet", "-"} {
		t.Run(out, func(t *testing.T) {
			o := DefaultOptions()
			o.Data, o.Now, o.Limit = dir, time.UnixMilli(now).UTC(), 1
			var stdout bytes.Buffer
			o.Output, o.Stdout = filepath.Join(t.TempDir(), "jobs.parquet"), &stdout
			if out == "-" {
				o.Output = "-"
			}
			st, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			r, err := rowio.Open[schema.Job](o.Output, &stdout)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			text, ok := r.Metadata(schema.AvoidPeersKey)
			got, err := schema.DecodeAvoidPeers(text)
			if !ok || err != nil || !reflect.DeepEqual(got, want) || st.AvoidListed != 2 {
				t.Fatalf("jobs file avoid list %v (present %v, %v, stats %d); want %v", got, ok, err, st.AvoidListed, want)
			}
		})
	}
}

func TestAvoidListKeepsTheLongestPenalties(t *testing.T) {
	live := map[string]schema.PeerPenalty{}
	for i := range schema.MaxAvoidPeers + 5 {
		a := fmt.Sprintf("10.%d.%d.%d:1", i>>16, i>>8&255, i&255)
		live[a] = schema.PeerPenalty{Addr: a, Until: int64(i)}
	}
	text, n := avoidList(live)
	ps, err := schema.DecodeAvoidPeers(text)
	if err != nil || n != schema.MaxAvoidPeers || len(ps) != n {
		t.Fatalf("listed %d (%d decoded, %v), want %d", n, len(ps), err, schema.MaxAvoidPeers)
	}
	if ps[0].Until != int64(schema.MaxAvoidPeers+4) || ps[n-1].Until != 5 {
		t.Errorf("kept penalties ending %d..%d; want the longest, %d..5", ps[0].Until, ps[n-1].Until, schema.MaxAvoidPeers+4)
	}
}
