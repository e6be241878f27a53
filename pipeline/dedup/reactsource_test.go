package dedup

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestNewestAnnounceEachReader: every reader (Parquet's column and row
// readers, Arrow's) keeps, per hash, the newest announce_peer observation
// (table.anns, which the reactivation rule weighs apart), whatever comes
// before or after it; a hash never announced keeps none. The first row
// groups hold no announce: the source is interned while earlier ones are
// folded.
func TestNewestAnnounceEachReader(t *testing.T) {
	ms := func(m int64) int64 { return t0.UnixMilli() + m*60_000 }
	gp, ann := schema.SourceGetPeers, schema.SourceAnnouncePeer
	hMiddle, hOutOfOrder, hNone, hTie := schema.Hash{0x10, 1}, schema.Hash{0x10, 2}, schema.Hash{0x20, 1}, schema.Hash{0x30, 1}
	obs := []schema.Observation{
		{InfoHash: hNone, ObservedAt: ms(1), Source: gp}, {InfoHash: hMiddle, ObservedAt: ms(1), Source: gp},
		{InfoHash: hNone, ObservedAt: ms(4), Source: gp}, {InfoHash: hMiddle, ObservedAt: ms(9), Source: gp},
		{InfoHash: hMiddle, ObservedAt: ms(5), Source: ann}, {InfoHash: hOutOfOrder, ObservedAt: ms(7), Source: ann},
		{InfoHash: hOutOfOrder, ObservedAt: ms(3), Source: ann}, {InfoHash: hTie, ObservedAt: ms(2), Source: ann},
		{InfoHash: hTie, ObservedAt: ms(2), Source: gp}, {InfoHash: hMiddle, ObservedAt: ms(2), Source: ann},
	}
	for i := range obs {
		obs[i].HashType, obs[i].RunID = schema.HashV1, "t"
	}
	want := map[schema.Hash]int64{hMiddle: ms(5), hOutOfOrder: ms(7), hNone: 0, hTie: ms(2)}
	check := func(t *testing.T, p, name string) {
		t.Helper()
		in, err := probe(p, name, "")
		if err != nil {
			t.Fatal(err)
		}
		b := newBatch(3600_000)
		defer b.release()
		b.trackAnn = true // as for a state with rows
		if _, err := readInput(context.Background(), in, ms(60), b); err != nil {
			t.Fatal(err)
		}
		for h, w := range want {
			if _, ok := b.parts[h[0]].index(&h); !ok {
				t.Fatalf("%x not aggregated", h[:2])
			}
			if got := b.announcedAt(&h); got != w {
				t.Errorf("%x: newest announce at %d, want %d", h[:2], got, w)
			}
		}
	}
	dir := t.TempDir()
	pq := filepath.Join(dir, "obs.parquet")
	w, err := rowio.Create[schema.Observation](pq, nil, parquet.MaxRowsPerRowGroup(2))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(obs); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	eachParquetReader(t, "parquet", func(t *testing.T) { check(t, pq, "obs.parquet") })
	t.Run("arrow", func(t *testing.T) {
		var buf bytes.Buffer
		if err := writeArrowRows(&buf, obs); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "obs.arrow")
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		check(t, p, "obs.arrow")
	})
}

// TestAnnounceReactivatesThroughDedup: two dedup passes over hashes a
// lookup reactivated at r, whose retry an hour later failed again (30
// days to wait). An announce_peer reactivates one two days on, where a
// get_peers does not (min_interval, 7d), but not within 12h of r
// (announce_min_interval); it counts when a get_peers follows it in the
// batch (a get_peers after it past min_interval does not make it later),
// and from a cold file; a second pass's announce reactivates what
// the first pass's get_peers did not, and changes nothing of a hash an
// announce already reactivated with no attempt since.
func TestAnnounceReactivatesThroughDedup(t *testing.T) {
	const day, hour = 24 * time.Hour, time.Hour
	r := t0
	at := func(d time.Duration) int64 { return r.Add(d).UnixMilli() }
	pol := schedule.Default()
	failed := func(h schema.Hash, tier string) schema.State {
		return schema.State{InfoHash: h, HashType: schema.HashV1, FirstSeen: at(-60 * day), LastSeen: at(0), SeenCount: 3,
			LastSource: schema.SourceGetPeers, FirstSource: schema.SourceGetPeers, MetadataStatus: schema.StatusFailed,
			LastFailure: schema.OutcomeNoPeers, Attempts: 6, BackoffStep: 5, LastAttempt: at(hour),
			NextRetry: at(hour + 30*day), Reactivated: at(0), Tier: tier}
	}
	lookedUp := failed(schema.Hash{0x43, 1}, schema.TierHot)    // get_peers, then an announce next pass
	announced := failed(schema.Hash{0x43, 2}, schema.TierHot)   // get_peers, announce, get_peers in one pass
	tooSoon := failed(schema.Hash{0x43, 3}, schema.TierHot)     // an announce 11h after r, then one at 13h
	onlyLookups := failed(schema.Hash{0x43, 4}, schema.TierHot) // get_peers both passes
	lateLookup := failed(schema.Hash{0x43, 5}, schema.TierHot)  // an announce, then a get_peers past min_interval
	cold := failed(schema.Hash{0x42, 1}, schema.TierCold)       // an announce two days on, thawed
	gp, ann := schema.SourceGetPeers, schema.SourceAnnouncePeer
	type sighting struct {
		h   schema.Hash
		d   time.Duration
		src string
	}
	pass1 := []sighting{
		{lookedUp.InfoHash, 2 * day, gp},
		{announced.InfoHash, day, gp}, {announced.InfoHash, 36 * hour, ann}, {announced.InfoHash, 2 * day, gp},
		{tooSoon.InfoHash, 11 * hour, ann},
		{onlyLookups.InfoHash, 2 * day, gp},
		{cold.InfoHash, 2 * day, ann},
	}
	pass2 := []sighting{
		{lookedUp.InfoHash, 3 * day, ann}, {lookedUp.InfoHash, 3*day + hour, gp},
		{announced.InfoHash, 3 * day, ann},
		{tooSoon.InfoHash, 13 * hour, ann},
		{onlyLookups.InfoHash, 3 * day, gp},
		{lateLookup.InfoHash, 6*day + 12*hour, ann}, {lateLookup.InfoHash, 7*day + 12*hour, gp},
	}
	tests := []struct {
		name   string
		was    schema.State
		after1 time.Duration // reactivated_at after each pass, from r (0: still r's)
		after2 time.Duration
	}{
		{"get_peers, then an announce", lookedUp, 0, 3 * day},
		{"announce between get_peers", announced, 36 * hour, 36 * hour},
		{"announce 11h after, then 13h", tooSoon, 0, 13 * hour},
		{"get_peers only", onlyLookups, 0, 0},
		{"cold, announced", cold, 2 * day, 2 * day},
		// As in two runs: the announce first, the get_peers then too soon.
		{"announce, then a get_peers past min_interval", lateLookup, 0, 6*day + 12*hour},
	}
	eachParquetReader(t, "parquet", func(t *testing.T) {
		dir := t.TempDir()
		data := filepath.Join(dir, "ds")
		commitColdHot(t, data, []schema.State{cold}, []schema.State{lookedUp, announced, tooSoon, onlyLookups, lateLookup})
		for pass, in := range [][]sighting{pass1, pass2} {
			var obs []schema.Observation
			for _, s := range in {
				obs = append(obs, schema.Observation{InfoHash: s.h, HashType: schema.HashV1, ObservedAt: at(s.d),
					Source: s.src, RunID: "t"})
			}
			if _, err := run(t, data, func(o *Options) {
				o.Now = r.Add([]time.Duration{2*day + 2*hour, 8 * day}[pass])
				o.Reactivate = func(s *schema.State, at, announcedAt int64) bool {
					return schedule.Reactivate(pol, s, at, announcedAt)
				}
			}, writeObs(t, dir, obs)); err != nil {
				t.Fatal(err)
			}
			s := readState(t, data)
			for _, tt := range tests {
				d := []time.Duration{tt.after1, tt.after2}[pass]
				wantAt, wantNext := at(d), at(d)+schedule.ReactivationOffset(pol, &tt.was)
				if d == 0 {
					wantAt, wantNext = tt.was.Reactivated, tt.was.NextRetry
				}
				g := s[tt.was.InfoHash]
				if g.Reactivated != wantAt || g.NextRetry != wantNext {
					t.Errorf("pass %d, %s: reactivated_at r%+v, next_retry r%+v; want r%+v, r%+v", pass+1, tt.name,
						time.Duration(g.Reactivated-at(0))*time.Millisecond, time.Duration(g.NextRetry-at(0))*time.Millisecond,
						time.Duration(wantAt-at(0))*time.Millisecond, time.Duration(wantNext-at(0))*time.Millisecond)
				}
				if tt.was.Tier == schema.TierCold && g.Tier != schema.TierHot {
					t.Errorf("pass %d, %s: tier %s, want hot", pass+1, tt.name, g.Tier)
				}
			}
		}
	})
}
