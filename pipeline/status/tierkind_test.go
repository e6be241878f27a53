package status

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/leases"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/plan"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestWavesByTierAndKind: the retry waves tell hot from cold hashes (a
// cold file's, or a cold tier's in a hot file) and retries from hashes
// never tried, and their hot overdue retries and new hashes are what
// plan-retries counts as due_retry and due_new at the same time: live
// leases and the blocklist are left out, a null next_retry is due. The
// overdue count mixed them all: an alert on it never cleared once cold
// hashes (planned only at the cold share's pace) piled up.
func TestWavesByTierAndKind(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	ms := func(d time.Duration) int64 { return now.Add(d).UnixMilli() }
	failed := func(h schema.Hash, tier string, in time.Duration) schema.State {
		return schema.State{InfoHash: h, HashType: 1, MetadataStatus: schema.StatusFailed, Tier: tier, Attempts: 1,
			LastAttempt: ms(-48 * time.Hour), LastFailure: "no_peers", NextRetry: ms(in)}
	}
	fresh := func(h schema.Hash, tier string, in time.Duration) schema.State {
		return schema.State{InfoHash: h, HashType: 1, MetadataStatus: schema.StatusNew, Tier: tier, NextRetry: ms(in)}
	}
	reactivated := failed(schema.Hash{0, 10}, "hot", -time.Minute)
	reactivated.Reactivated = ms(-time.Hour)
	nullRetry := fresh(schema.Hash{0, 6}, "hot", 0)
	nullRetry.NextRetry = 0
	hot := []schema.State{
		failed(schema.Hash{0, 1}, "hot", -time.Hour),   // hot retry
		failed(schema.Hash{0, 2}, "hot", -time.Minute), // live lease
		failed(schema.Hash{0, 3}, "hot", -2*time.Hour), // lease ended: hot retry
		failed(schema.Hash{0, 4}, "hot", -time.Hour),   // blocklisted
		fresh(schema.Hash{0, 5}, "hot", -time.Hour),    // hot new
		nullRetry, // hot new
		failed(schema.Hash{0, 7}, "cold", -24*time.Hour), // cold tier in a hot file
		{InfoHash: schema.Hash{0, 8}, HashType: 1, MetadataStatus: schema.StatusFetched, Tier: "hot"},
		failed(schema.Hash{0, 9}, "hot", 5*time.Hour), // hot retry, next day
		reactivated, // hot retry
	}
	cold := []schema.State{
		failed(schema.Hash{0, 0x20}, "cold", -30*24*time.Hour),
		failed(schema.Hash{0, 0x21}, "hot", -time.Hour), // a hot row left in a cold file
		fresh(schema.Hash{0, 0x22}, "cold", -time.Hour),
		fresh(schema.Hash{0, 0x23}, "cold", 40*24*time.Hour),
	}
	other := []schema.State{failed(schema.Hash{7, 1}, "hot", -time.Hour)} // no lease in partition 07

	d, err := dataset.Open(context.Background(), t.TempDir(), dataset.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	stage := func(key, name string, rows []schema.State) dataset.FileInfo {
		fi, err := dataset.WriteStagedAs(tx, dataset.TableState, key, name, rows)
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	tx.SetPartition(dataset.TableState, "00", []dataset.FileInfo{
		stage("00", dataset.NewName(".parquet"), hot), stage("00", schedule.ColdFileName(), cold)})
	tx.SetPartition(dataset.TableState, "07", []dataset.FileInfo{stage("07", dataset.NewName(".parquet"), other)})
	if err := leases.Write(tx, leases.Set{
		{0, 2}: {InfoHash: schema.Hash{0, 2}, LeaseID: "L1", LeaseUntil: ms(time.Hour), PlannedAt: ms(-time.Hour)},
		{0, 3}: {InfoHash: schema.Hash{0, 3}, LeaseID: "L0", LeaseUntil: ms(-time.Minute), PlannedAt: ms(-3 * time.Hour)},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(context.Background(), dataset.CommitOptions{Writer: "test"}); err != nil {
		t.Fatal(err)
	}
	blocked := fmt.Sprintf("%x\n", schema.Hash{0, 4})
	if err := os.WriteFile(filepath.Join(d.Dir, schedule.BlocklistName), []byte(blocked), 0o644); err != nil {
		t.Fatal(err)
	}

	r, err := Run(context.Background(), d.Dir, now, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tier, kind, wave string
		want             int64
	}{
		{"hot", "retry", "overdue", 4},
		{"hot", "new", "overdue", 2},
		{"cold", "retry", "overdue", 3},
		{"cold", "new", "overdue", 1},
		{"hot", "retry", "within_1d", 1},
		{"cold", "new", "later", 1},
		{"hot", "retry", "within_1h", 0},
	} {
		if got := r.WavesBy[c.tier][c.kind][c.wave]; got != c.want {
			t.Errorf("waves %s %s %s = %d, want %d", c.tier, c.kind, c.wave, got, c.want)
		}
	}
	if got := r.RetryWaves["overdue"]; got != 10 {
		t.Errorf("retry_waves.overdue = %d, want 10 (all tiers and kinds)", got)
	}

	// plan-retries at the same time, --limit 0: counts, leases nothing.
	o := plan.DefaultOptions()
	o.Data, o.Now, o.Limit, o.Output = d.Dir, now, 0, filepath.Join(t.TempDir(), "jobs.parquet")
	st, err := plan.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if hr := r.WavesBy["hot"]["retry"]["overdue"]; st.DueRetry != hr {
		t.Errorf("plan-retries due_retry %d, status hot retries overdue %d: want them equal", st.DueRetry, hr)
	}
	if hn := r.WavesBy["hot"]["new"]["overdue"]; st.DueNew != hn {
		t.Errorf("plan-retries due_new %d, status hot new overdue %d: want them equal", st.DueNew, hn)
	}

	prom := string(r.Metrics(time.Second, now, 0))
	for _, want := range []string{
		`infohash_status_overdue{tier="hot",kind="retry"} 4` + "\n",
		`infohash_status_overdue{tier="hot",kind="new"} 2` + "\n",
		`infohash_status_overdue{tier="cold",kind="retry"} 3` + "\n",
		`infohash_status_overdue{tier="cold",kind="new"} 1` + "\n",
		`infohash_status_retry_wave{tier="hot",kind="retry",wave="within_1d"} 1` + "\n",
	} {
		if !strings.Contains(prom, want) {
			t.Errorf("metrics lack %q:\n%s", want, prom)
		}
	}
}
