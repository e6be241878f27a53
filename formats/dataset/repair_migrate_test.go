package dataset

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/schema/schematest"
)

// repairRows are format 11 state rows: a victim of fetch's old check of
// a v2 claim, and rows like it that are none.
func repairRows() []schematest.StateV11 {
	const day = int64(24 * time.Hour / time.Millisecond)
	v2 := bytes.Repeat([]byte{0xb2}, 32)
	row := func(b byte, typ int8, v2 []byte, failure string) schematest.StateV11 {
		return schematest.StateV11{StateV8: schematest.StateV8{StateV5: schematest.StateV5{InfoHash: schema.Hash{0, b},
			InfoHashV2: v2, HashType: typ, FirstSeen: 1000, LastSeen: 2000, SeenCount: 4, LastSource: schema.SourceImport,
			MetadataStatus: schema.StatusFailed, Attempts: 3, LastAttempt: 10 * day, LastFailure: failure,
			NextRetry: 40 * day, Tier: schema.TierHot, BackoffStep: 2, BadMetadata: 2,
			AvoidPeers: []string{"127.0.0.1:1", "127.0.0.1:2"}}, Peers: []string{"127.0.0.1:3"}},
			FirstSource: schema.SourceImport, LastFailureAt: 10 * day}
	}
	return []schematest.StateV11{
		row(1, schema.HashV2, v2, schema.OutcomeHashMismatch),  // the victim
		row(2, schema.HashV1, nil, schema.OutcomeHashMismatch), // a v1 hash proved bad
		row(3, schema.HashV2, v2, "no_peers"),                  // a v2 claim failed otherwise
		row(4, schema.HashV2, nil, schema.OutcomeHashMismatch), // v2 without a claimed full hash
		row(5, schema.HashV2, v2, schema.OutcomeHashMismatch),  // a victim due already (below)
	}
}

// TestMigrateRepairsV2ClaimVictims: the migration from format 11 repairs
// the state rows fetch's old check of a full v2 claim damaged (failed,
// hash_mismatch, hash_type 2, an info_hash_v2): bad_metadata 0, no
// avoid_peers, next_retry at most the opener's clock, tier hot; every
// other value of theirs, and every value of the other rows, is kept; it
// says how many once. The rows are cold, in a cold file: the victims,
// hot again, move to a new hot file of the partition (they stayed cold,
// for the cold sweep alone to find), the others stay in a cold one. The
// repair is the migration's: the next writer's open commits nothing and
// changes nothing.
func TestMigrateRepairsV2ClaimVictims(t *testing.T) {
	rows := repairRows()
	for i := range rows {
		rows[i].Tier = schema.TierCold
	}
	now := time.UnixMilli(20 * int64(24*time.Hour/time.Millisecond)).UTC() // between last_attempt and next_retry
	rows[4].NextRetry = schema.Millis(now) - 5                             // due already: kept
	dir, path, _, m := oldStateDataset(t, 11, rows)
	// The file is a cold one (schedule's cold-part-…), as merge archives.
	cold := "cold-" + filepath.Base(path)
	if err := os.Rename(path, filepath.Join(filepath.Dir(path), cold)); err != nil {
		t.Fatal(err)
	}
	editManifest(t, filepath.Join(dir, "manifests", manifestName(m.Snapshot)), func(j map[string]any) {
		st := jsonTable(j, TableState)
		st["partitions"].(map[string]any)["00"].([]any)[0].(map[string]any)["name"] = cold
		st["blooms"].(map[string]any)["00"].(map[string]any)["rows"] = len(rows) // the filter's keys
	})

	var log bytes.Buffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(&log, nil)))
	cur := openWriter(t, dir, OpenOptions{Now: now})
	if cur.FormatVersion != FormatVersion || cur.Snapshot != m.Snapshot+1 {
		t.Fatalf("after the migration: format %d, snapshot %d; want %d, %d", cur.FormatVersion, cur.Snapshot,
			FormatVersion, m.Snapshot+1)
	}
	if n := strings.Count(log.String(), "repaired the state rows"); n != 1 || !strings.Contains(log.String(), "rows=2 ") ||
		!strings.Contains(log.String(), "now="+now.Format(time.RFC3339Nano)) {
		t.Errorf("the migration's log says the repair %d times, want once with rows=2 and its clock:\n%s", n, log.String())
	}
	files := cur.Table(TableState).Partitions["00"]
	if len(files) != 2 || !strings.HasPrefix(files[0].Name, "cold-part-") || files[0].Name == cold || files[0].Rows != 3 ||
		!strings.HasPrefix(files[1].Name, "part-") || files[1].Rows != 2 {
		t.Errorf("state files after the migration: %+v, want a new cold-part-… file of the 3 others, a part-… one of the 2 victims", files)
	}

	want := make([]schema.State, len(rows))
	for i, r := range rows {
		want[i] = schema.State{InfoHash: r.InfoHash, InfoHashV2: r.InfoHashV2, HashType: r.HashType, FirstSeen: r.FirstSeen,
			LastSeen: r.LastSeen, SeenCount: r.SeenCount, LastSource: r.LastSource, Activity: r.Activity,
			MetadataStatus: r.MetadataStatus, Attempts: r.Attempts, LastAttempt: r.LastAttempt, LastFailure: r.LastFailure,
			NextRetry: r.NextRetry, Tier: r.Tier, BackoffStep: r.BackoffStep, BadMetadata: r.BadMetadata,
			AvoidPeers: r.AvoidPeers, Peers: r.Peers, FirstSource: r.FirstSource, LastFailureAt: r.LastFailureAt}
	}
	for _, i := range []int{0, 4} {
		want[i].BadMetadata, want[i].AvoidPeers, want[i].Tier = 0, nil, schema.TierHot
	}
	want[0].NextRetry = schema.Millis(now)
	// The file of the others, then the victims' (each sorted).
	want = append(append(want[1:4:4], want[0]), want[4])
	check := func(what string) {
		t.Helper()
		d, err := OpenReadOnly(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		m, err := d.Current()
		if err != nil {
			t.Fatal(err)
		}
		got, err := ReadPartition[schema.State](d, m.Table(TableState), "00")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
		}
		for i := range want {
			if len(got[i].AvoidPeers) == 0 {
				got[i].AvoidPeers = nil // an empty list reads as one
			}
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Errorf("%s: row %d:\n got %+v\nwant %+v", what, i+1, got[i], want[i])
			}
		}
	}
	check("migrated")

	// The next writer, at a later clock, finds format 12: nothing to do.
	log.Reset()
	again := openWriter(t, dir, OpenOptions{Now: now.Add(365 * 24 * time.Hour)})
	if again.Snapshot != cur.Snapshot || log.Len() > 0 {
		t.Errorf("a second open: snapshot %d (was %d), log %q", again.Snapshot, cur.Snapshot, log.String())
	}
	check("opened again")
}

// TestMigrationRepairClock: without a clock of the opener's, the repair
// makes a victim due at the wall clock (no later than the open's end).
func TestMigrationRepairClock(t *testing.T) {
	rows := repairRows()[:1]
	rows[0].NextRetry = schema.Millis(time.Now().Add(30 * 24 * time.Hour))
	dir, _, _, _ := oldStateDataset(t, 11, rows)
	d, err := Open(context.Background(), dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	after := schema.Millis(time.Now())
	m, err := d.Current()
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadPartition[schema.State](d, m.Table(TableState), "00")
	if err != nil || len(got) != 1 || got[0].NextRetry > after || got[0].BadMetadata != 0 {
		t.Fatalf("repaired on the wall clock: %+v, %v; want next_retry <= %d", got, err, after)
	}
}
