package schedule

import (
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// TestNoPeersForAYear follows hashes that fail no_peers every time they
// are due, on a fake clock, for 400 days: each delay is the seed's
// schedule (30m, 2h, 8h, 1d, 7d, then 30d for ever) within the jitter
// band; past the schedule and 90 days unseen the hash goes cold and keeps
// being retried; it is never dropped.
func TestNoPeersForAYear(t *testing.T) {
	p := Default()
	want := []time.Duration{30 * time.Minute, 2 * time.Hour, 8 * time.Hour, Day, 7 * Day, 30 * Day}
	end := t0 + 400*day
	for n := range uint64(200) {
		st := newState(n)
		now := t0
		var delays []int64
		archivedAt := int64(0)
		for now < end {
			if ShouldArchive(p, &st, now) {
				if archivedAt == 0 {
					archivedAt = now
				}
				st.Tier = schema.TierCold
			}
			if !Due(&st, now) {
				t.Fatalf("hash %d not due at its next_retry", n)
			}
			if err := ApplyFailure(p, &st, schema.OutcomeNoPeers, now, false); err != nil {
				t.Fatal(err)
			}
			delays = append(delays, st.NextRetry-now)
			if Due(&st, st.NextRetry-1) {
				t.Fatalf("hash %d due before its next_retry", n)
			}
			now = st.NextRetry
		}
		for i, d := range delays {
			inBand(t, "attempt", d, want[min(i, len(want)-1)], p.Jitter)
		}
		// 8h+1d+7d+… ≈ 8.4 days for the first five steps, then 30d±20%.
		if got := st.Attempts; got < 15 || got > 22 || int(got) != len(delays) {
			t.Errorf("hash %d: %d attempts in 400 days (%d recorded), want 15..22", n, got, len(delays))
		}
		if archivedAt < t0+90*day || archivedAt > t0+(90+36)*day || st.Tier != schema.TierCold {
			t.Errorf("hash %d: archived at day %.1f (tier %s), want once 90 days unseen are past",
				n, float64(archivedAt-t0)/float64(day), st.Tier)
		}
		if st.MetadataStatus != schema.StatusFailed || st.InfoHash != hashN(n) || st.FirstSeen != t0 {
			t.Errorf("hash %d: state lost its identity: %+v", n, st)
		}
	}
}

// TestSeenMonthlyStaysHot: the same failures, but the hash is observed
// every 30 days, so it never goes cold.
func TestSeenMonthlyStaysHot(t *testing.T) {
	p := Default()
	st := newState(7)
	for now := t0; now < t0+400*day; now = st.NextRetry {
		for st.LastSeen+30*day <= now {
			st.LastSeen += 30 * day
		}
		if ShouldArchive(p, &st, now) {
			t.Fatalf("archived at day %d although seen on day %d", (now-t0)/day, (st.LastSeen-t0)/day)
		}
		_ = ApplyFailure(p, &st, schema.OutcomeNoPeers, now, false)
	}
}

// spread fails n hashes at the same instant from backoff step `step` and
// returns the largest number due in any one minute and the uniform ideal
// (n spread evenly over the jitter window).
func spread(t testing.TB, p Policy, n int, step int32) (maxPerMinute int, ideal float64) {
	delay := time.Duration(p.Delay(schema.OutcomeNoPeers, step))
	lo := t0 + int64(float64(delay/time.Millisecond)*(1-p.Jitter))
	minutes := int(float64(delay/time.Minute)*2*p.Jitter) + 1
	counts := make([]int, minutes)
	var st schema.State
	for i := range n {
		st = schema.State{InfoHash: hashN(uint64(i)), MetadataStatus: schema.StatusFailed,
			Attempts: step, BackoffStep: step, LastFailure: schema.OutcomeNoPeers}
		if err := ApplyFailure(p, &st, schema.OutcomeNoPeers, t0, false); err != nil {
			t.Fatal(err)
		}
		m := int((st.NextRetry - lo) / minute)
		if st.NextRetry < lo || m >= minutes {
			t.Fatalf("hash %d due %v after the failure, outside the jitter window", i, time.Duration(st.NextRetry-t0)*time.Millisecond)
		}
		counts[m]++
	}
	for _, c := range counts {
		maxPerMinute = max(maxPerMinute, c)
	}
	return maxPerMinute, float64(n) / (float64(delay/time.Minute) * 2 * p.Jitter)
}

// TestSpreadMillionFailingTogether: 1,000,000 hashes (consecutive numbers,
// the worst case for a weak hash) failing no_peers at the same instant.
func TestSpreadMillionFailingTogether(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	p := Default()
	tests := []struct {
		name  string
		step  int32
		bound float64 // largest minute / ideal
	}{
		// 30m ± 20%: 12 one-minute slots, ~83,000 each; binomial noise ~0.3%.
		{"first retry 30m", 0, 1.03},
		// 30d ± 20%: 17,280 slots of ~58; the fullest of them is a Poisson tail.
		{"sixth retry 30d", 5, 2.0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ideal := spread(t, p, n, tt.step)
			t.Logf("%d hashes, retry %s ±%.0f%%: largest minute %d, uniform ideal %.1f (×%.3f)",
				n, p.Delay(schema.OutcomeNoPeers, tt.step), 100*p.Jitter, got, ideal, float64(got)/ideal)
			if float64(got) > tt.bound*ideal {
				t.Errorf("largest minute %d exceeds %.2f × ideal %.1f", got, tt.bound, ideal)
			}
		})
	}
}

func BenchmarkApplyFailure(b *testing.B) {
	p := Default()
	st := newState(1)
	now := t0
	for i := 0; b.Loop(); i++ {
		st.InfoHash = hashN(uint64(i))
		st.MetadataStatus, st.BackoffStep = schema.StatusFailed, int32(i%7)
		_ = ApplyFailure(p, &st, schema.OutcomeNoPeers, now, false)
	}
}

// BenchmarkSpreadMillion times scheduling 1,000,000 simultaneous failures
// and reports the fullest minute against the uniform ideal.
func BenchmarkSpreadMillion(b *testing.B) {
	p := Default()
	var got int
	var ideal float64
	for b.Loop() {
		got, ideal = spread(b, p, 1_000_000, 0)
	}
	b.ReportMetric(float64(got), "max/minute")
	b.ReportMetric(float64(got)/ideal, "max/ideal")
}
