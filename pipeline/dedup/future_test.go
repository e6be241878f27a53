package dedup

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

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// TestFutureObservationsClamped: every read path reads a time more than
// FutureSkew past the run's clock as the clock, counts it, and keeps
// times up to the skew as they are.
func TestFutureObservationsClamped(t *testing.T) {
	if FutureSkew != 5*time.Minute {
		t.Errorf("FutureSkew is %v: README and dedup --help say 5 minutes", FutureSkew)
	}
	now := t0.Add(5 * 24 * time.Hour).UnixMilli()
	skew := FutureSkew.Milliseconds()
	h := func(b byte) schema.Hash { return schema.Hash{b, 0xfe} }
	obs := []schema.Observation{
		{InfoHash: h(1), ObservedAt: now - 3600_000},
		{InfoHash: h(2), ObservedAt: now + skew - 60_000}, // within the skew: as is
		{InfoHash: h(3), ObservedAt: now + skew},          // at its end: as is
		{InfoHash: h(4), ObservedAt: now + skew + 1},      // past it: the clock
		{InfoHash: h(5), ObservedAt: now + 55*24*3600_000},
		{InfoHash: h(5), ObservedAt: now - 1000},
	}
	for i := range obs {
		obs[i].HashType, obs[i].Source = schema.HashV1, schema.SourceGetPeers
	}
	want := map[schema.Hash][2]int64{ // first, last
		h(1): {now - 3600_000, now - 3600_000},
		h(2): {now + skew - 60_000, now + skew - 60_000},
		h(3): {now + skew, now + skew},
		h(4): {now, now},
		h(5): {now - 1000, now},
	}
	dir := t.TempDir()
	pq := writeObs(t, dir, obs)
	var stream bytes.Buffer
	w, err := rowio.Create[schema.Observation]("-", &stream)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(obs); err != nil {
		t.Fatal(err)
	}
	w.Close()
	ar := filepath.Join(dir, "obs.arrow")
	if err := os.WriteFile(ar, stream.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	defer func() { fastPath = true }()
	for _, tt := range []struct {
		name string
		path string
		fast bool
	}{
		{"parquet columns", pq, true},
		{"parquet rows", pq, false},
		{"arrow columns", ar, true},
		{"arrow rows", ar, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fastPath = tt.fast
			in, err := probe(tt.path, tt.path, "")
			if err != nil {
				t.Fatal(err)
			}
			b := newBatch(3600_000)
			defer b.release()
			b.fut.setClock(now)
			if _, err := readInput(context.Background(), in, now, b); err != nil {
				t.Fatal(err)
			}
			b.endInput("in")
			for hh, fl := range want {
				a, _, ok := b.parts[hh[0]].find(&hh)
				if !ok {
					t.Fatalf("%x not read", hh[:2])
				}
				if got := [2]int64{b.first(a), a.last}; got != fl {
					t.Errorf("%x: first, last = now%+d, now%+d ms; want now%+d, now%+d", hh[:2],
						got[0]-now, got[1]-now, fl[0]-now, fl[1]-now)
				}
			}
			if b.fut.n != 2 || len(b.futNotes) != 1 || b.futNotes[0].n != 2 || b.futNotes[0].latest != obs[4].ObservedAt {
				t.Errorf("clamped %d, notes %+v; want 2, one note of 2 with the latest time", b.fut.n, b.futNotes)
			}
		})
	}
}

// TestFutureObservationDoesNotPoisonHash: an observation dated weeks
// after --now does not hold the hash's last_seen in the future, where a
// later real sighting would not count as fresh (no reactivation). It is
// counted and warned about once for its input, and the same input with
// the same --now gives the same state.
func TestFutureObservationDoesNotPoisonHash(t *testing.T) {
	dir := t.TempDir()
	now := t0.Add(5 * 24 * time.Hour)
	h := schema.Hash{0x11, 1}
	future := []schema.Observation{
		{InfoHash: h, HashType: 1, ObservedAt: now.Add(54 * 24 * time.Hour).UnixMilli(), Source: schema.SourceGetPeers},
		{InfoHash: schema.Hash{0x12, 1}, HashType: 1, ObservedAt: now.Add(-time.Hour).UnixMilli(), Source: schema.SourceGetPeers},
	}
	in := writeObs(t, dir, future)
	var log bytes.Buffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelInfo})))
	var states []map[schema.Hash]schema.State
	for _, ds := range []string{"a", "b"} {
		st, err := run(t, filepath.Join(dir, ds), func(o *Options) { o.Now = now }, in)
		if err != nil {
			t.Fatal(err)
		}
		if st.FutureClamped != 1 {
			t.Errorf("%s: observations_future_clamped = %d, want 1", ds, st.FutureClamped)
		}
		states = append(states, readState(t, filepath.Join(dir, ds)))
	}
	if n := strings.Count(log.String(), "dated after the run's clock"); n != 2 || !strings.Contains(log.String(), "observations=1 ") {
		t.Errorf("%d warnings (want one a run, one input each):\n%s", n, log.String())
	}
	if s := states[0][h]; s.LastSeen != now.UnixMilli() || s.FirstSeen != now.UnixMilli() {
		t.Fatalf("first, last seen = now+%v, now+%v; want now", time.Duration(s.FirstSeen-now.UnixMilli())*time.Millisecond,
			time.Duration(s.LastSeen-now.UnixMilli())*time.Millisecond)
	}
	for k, s := range states[0] {
		if !reflect.DeepEqual(states[1][k], s) {
			t.Errorf("%x: the same input and --now gave %+v, then %+v", k, s, states[1][k])
		}
	}
	// Two weeks on, the hash is seen: a fresh sighting, passed to the
	// reactivation rule, and last_seen moves to it.
	later := now.Add(14 * 24 * time.Hour)
	calls := 0
	_, err := run(t, filepath.Join(dir, "a"), func(o *Options) {
		o.Now = later
		o.Reactivate = func(s *schema.State, at, _ int64) bool {
			calls++
			if s.InfoHash != h || at != later.UnixMilli() {
				t.Errorf("reactivate(%x, now%+d ms)", s.InfoHash[:2], at-later.UnixMilli())
			}
			return false
		}
	}, writeObs(t, dir, []schema.Observation{{InfoHash: h, HashType: 1, ObservedAt: later.UnixMilli(), Source: schema.SourceGetPeers}}))
	if err != nil {
		t.Fatal(err)
	}
	if s := readState(t, filepath.Join(dir, "a"))[h]; calls != 1 || s.LastSeen != later.UnixMilli() {
		t.Errorf("later sighting: %d reactivation calls, last_seen at later%+d ms; want 1, later", calls, s.LastSeen-later.UnixMilli())
	}
}
