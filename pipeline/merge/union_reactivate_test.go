package merge

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/dedup"
	"github.com/infohash/infohash/pipeline/schedule"
)

// makeTiered commits states into a new dataset, each cold row in its
// partition's cold file as archiving leaves it.
func makeTiered(t *testing.T, states ...schema.State) string {
	t.Helper()
	dir := t.TempDir()
	parts := map[string][]datasettest.StateFile{}
	for _, st := range states { // one hash per partition in these tests
		f := datasettest.StateFile{Rows: []schema.State{st}}
		if st.Tier == schema.TierCold {
			f.Name = schedule.ColdFileName()
		}
		key := fmt.Sprintf("%02x", st.InfoHash[0])
		parts[key] = append(parts[key], f)
	}
	datasettest.CommitStateFiles(t, dir, parts)
	return dir
}

// sightWithDedup applies one observation of h at at from source src to
// dir with dedup, its reactivation rule bound to the default policy (as
// the CLI binds the dataset's).
func sightWithDedup(t *testing.T, dir string, h schema.Hash, at, now int64, src string) dedup.Stats {
	t.Helper()
	path := filepath.Join(t.TempDir(), "obs.parquet")
	w, err := rowio.Create[schema.Observation](path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]schema.Observation{{InfoHash: h, HashType: schema.HashV1, ObservedAt: at, Source: src}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	p := schedule.Default()
	o := dedup.DefaultOptions()
	o.Data, o.Inputs, o.Now = dir, []string{path}, tm(now)
	o.Reactivate = func(st *schema.State, at, announcedAt int64) bool { return schedule.Reactivate(p, st, at, announcedAt) }
	st, err := dedup.Run(context.Background(), o)
	if err != nil {
		t.Fatalf("dedup: %v", err)
	}
	return st
}

// TestUnionReactivatesLikeDedup: a sighting one side of merge --from made
// after the other side's last_seen goes through the reactivation rule
// when the combined record's retry columns come from the side that has
// not seen it: the union pulls next_retry, sets reactivated_at and makes
// a cold hash hot exactly as dedup applying that sighting does, and
// counts it the same. It moved last_seen and left the dormant schedule
// as it was. An announce_peer sighting (the combined record's
// last_source) is weighed as dedup weighs it: within min_interval of the
// last reactivation, but announce_min_interval after it, it reactivates.
func TestUnionReactivatesLikeDedup(t *testing.T) {
	seen := t0 + 40*day // the newer sighting
	now := seen + hour
	h := hashAt(0x61, 1)
	dormant := func(tier string, next, attempted, reactivated int64) schema.State {
		return schema.State{InfoHash: h, HashType: schema.HashV1, FirstSeen: t0, LastSeen: t0, SeenCount: 3,
			LastSource: schema.SourceGetPeers, Activity: 1, MetadataStatus: schema.StatusFailed,
			LastFailure: schema.OutcomeConnectFailed, Attempts: 5, BackoffStep: 4, LastAttempt: attempted,
			NextRetry: next, Reactivated: reactivated, Tier: tier}
	}
	for _, tc := range []struct {
		name                  string
		rec                   schema.State
		theirs                bool // the dormant record is the other side's, the sighting ours
		reactivated, rewarmed int64
		src                   string // the sighting's source ("": sample_infohashes)
	}{
		{"dormant failed", dormant(schema.TierHot, seen+20*day, seen-10*day, 0), false, 1, 0, ""},
		{"dormant failed, the other side's", dormant(schema.TierHot, seen+20*day, seen-10*day, 0), true, 1, 0, ""},
		{"cold, retry far", dormant(schema.TierCold, seen+20*day, seen-30*day, 0), false, 1, 1, ""},
		{"cold, already due", dormant(schema.TierCold, seen-day, seen-30*day, 0), false, 0, 1, ""},
		{"attempted after the sighting", dormant(schema.TierHot, seen+20*day, seen+minute, 0), false, 0, 0, ""},
		{"reactivated within min_interval", dormant(schema.TierHot, seen+20*day, seen-10*day, seen-day), false, 0, 0, ""},
		{"reactivated a day before, announced", dormant(schema.TierHot, seen+20*day, seen-hour, seen-day), false, 1, 0,
			schema.SourceAnnouncePeer},
		{"reactivated a day before, announced, the other side's", dormant(schema.TierHot, seen+20*day, seen-hour, seen-day),
			true, 1, 0, schema.SourceAnnouncePeer},
		{"reactivated 11h before, announced", dormant(schema.TierHot, seen+20*day, seen-hour, seen-11*hour), false, 0, 0,
			schema.SourceAnnouncePeer},
		{"early in its schedule", dormant(schema.TierHot, seen+hour, seen-hour, 0), false, 0, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.src
			if src == "" {
				src = schema.SourceSampleInfohashes
			}
			sighting := newHash(h, seen)
			sighting.LastSource = src
			// What dedup makes of the sighting.
			ref := makeTiered(t, tc.rec)
			ds := sightWithDedup(t, ref, h, seen, now, src)
			want := stateOf(t, ref)[h]
			if ds.Reactivated != tc.reactivated || ds.Rewarmed != tc.rewarmed {
				t.Fatalf("dedup: reactivated %d rewarmed %d, want %d and %d", ds.Reactivated, ds.Rewarmed, tc.reactivated, tc.rewarmed)
			}
			mine, other := makeTiered(t, tc.rec), makeTiered(t, sighting)
			if tc.theirs {
				mine, other = other, mine
			}
			u := runFromT(t, mine, other, now).Union
			if u.HashesCombined != 1 || u.Reactivated != tc.reactivated || u.Rewarmed != tc.rewarmed {
				t.Errorf("union stats %+v, want reactivated %d rewarmed %d", u, tc.reactivated, tc.rewarmed)
			}
			got := stateOf(t, mine)[h]
			if got.LastSeen != seen || got.LastSource != src ||
				got.NextRetry != want.NextRetry || got.Reactivated != want.Reactivated ||
				got.BackoffStep != want.BackoffStep || got.Tier != want.Tier || got.LastAttempt != want.LastAttempt {
				t.Errorf("after the union:\n%+v\nafter dedup of the same sighting:\n%+v", got, want)
			}
		})
	}
}

// TestUnionReactivationHolds: a union that reactivated a hash, repeated
// with a newer copy of the other dataset, changes nothing more: the
// other side's unpulled next_retry from the same attempt does not win
// back (the record with the later reactivated_at does).
func TestUnionReactivationHolds(t *testing.T) {
	seen := t0 + 40*day
	h := hashAt(0x62, 1)
	rec := schema.State{InfoHash: h, HashType: schema.HashV1, FirstSeen: t0, LastSeen: t0, SeenCount: 3,
		LastSource: schema.SourceGetPeers, Activity: 1, MetadataStatus: schema.StatusFailed,
		LastFailure: schema.OutcomeConnectFailed, Attempts: 5, BackoffStep: 4, LastAttempt: seen - 10*day,
		NextRetry: seen + 20*day, Tier: schema.TierHot}
	theirs := rec // the same history, and the sighting, unapplied to the schedule
	theirs.LastSeen = seen
	a, b := makeTiered(t, rec), makeTiered(t, theirs)
	addTables(t, b, nil, nil, nil, []string{"obs-b"}) // what b applied: the second union shares it
	if u := runFromT(t, a, b, seen+hour).Union; u.Reactivated != 1 {
		t.Fatalf("union stats %+v, want the hash reactivated", u)
	}
	first := stateOf(t, a)[h]
	if first.NextRetry >= rec.NextRetry || first.Reactivated != seen {
		t.Fatalf("after the union: %+v, want next_retry pulled, reactivated_at %d", first, seen)
	}
	addTables(t, b, nil, nil, nil, []string{"obs-b2"}) // a newer copy of b
	u := runFromT(t, a, b, seen+2*hour).Union
	if u.AlreadyMerged || u.Reactivated != 0 {
		t.Fatalf("union with the newer copy: %+v", u)
	}
	if again := stateOf(t, a)[h]; !reflect.DeepEqual(again, first) {
		t.Fatalf("union with the newer copy changed the hash:\n%+v\nwas\n%+v", again, first)
	}
}
