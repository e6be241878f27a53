package status

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestOverdueRetriesByLastFailure: the overdue retries of each tier are
// split by last failure class, in --format json, the metrics file (every
// class at 0 too, other for a class the policy does not know or none)
// and one line of the text; each tier's classes sum to its overdue
// retries. The retries not yet due and the new hashes are not in it.
// Status counted overdue hashes by tier and kind alone: an operator saw
// the count climb but not whether it was no_peers or timeouts.
func TestOverdueRetriesByLastFailure(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	n := byte(0)
	row := func(status, tier, failure string, in time.Duration) schema.State {
		n++
		return schema.State{InfoHash: schema.Hash{0x40, n}, HashType: 1, MetadataStatus: status, Tier: tier, Attempts: 1,
			LastFailure: failure, NextRetry: now.Add(in).UnixMilli()}
	}
	failed := func(tier, failure string, in time.Duration) schema.State { return row("failed", tier, failure, in) }
	hot := []schema.State{
		failed("hot", "no_peers", -time.Hour), failed("hot", "no_peers", -time.Minute), failed("hot", "no_peers", 0),
		failed("hot", "timeout", -time.Hour), failed("hot", "timeout", -time.Hour),
		failed("hot", "connect_failed", -time.Hour),
		failed("hot", "too_large", -time.Hour),
		failed("hot", "from_the_future", -time.Hour), // other
		failed("hot", "", -time.Hour),                // other
		failed("hot", "no_peers", time.Hour),         // not due
		row("new", "hot", "", -time.Hour),            // new, not a retry
		failed("cold", "no_peers", -time.Hour),       // cold tier in a hot file
	}
	cold := []schema.State{failed("cold", "rejected", -24*time.Hour), failed("hot", "rejected", -time.Hour)}
	dir := t.TempDir()
	datasettest.CommitStateFiles(t, dir, map[string][]datasettest.StateFile{"40": {{Rows: hot}, {Name: schedule.ColdFileName(), Rows: cold}}})

	r, err := Run(context.Background(), dir, now, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]int64{
		"hot":  {"no_peers": 3, "timeout": 2, "connect_failed": 1, "too_large": 1, "other": 2},
		"cold": {"no_peers": 1, "rejected": 2},
	}
	for _, tier := range WaveTiers {
		var sum int64
		for _, c := range FailureLabels() {
			if got := r.OverdueByFailure[tier][c]; got != want[tier][c] {
				t.Errorf("%s %s: %d overdue retries, want %d", tier, c, got, want[tier][c])
			}
			sum += r.OverdueByFailure[tier][c]
		}
		if len(r.OverdueByFailure[tier]) != len(FailureLabels()) {
			t.Errorf("%s: classes %v, want %v", tier, r.OverdueByFailure[tier], FailureLabels())
		}
		if o := r.WavesBy[tier][KindRetry]["overdue"]; sum != o {
			t.Errorf("%s: classes sum to %d, overdue retries %d", tier, sum, o)
		}
	}

	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		O map[string]map[string]int64 `json:"overdue_retries_by_tier_and_last_failure"`
	}
	if err := json.Unmarshal(b, &j); err != nil || j.O["hot"]["no_peers"] != 3 || j.O["cold"]["rejected"] != 2 || j.O["cold"]["timeout"] != 0 {
		t.Errorf("JSON: %v, %v; want hot no_peers 3, cold rejected 2 and timeout 0", j.O, err)
	}

	prom := string(r.Metrics(time.Second, now, 0))
	checkExposition(t, prom)
	for _, line := range []string{
		`infohash_status_overdue_retries{tier="hot",last_failure="no_peers"} 3`,
		`infohash_status_overdue_retries{tier="hot",last_failure="other"} 2`,
		`infohash_status_overdue_retries{tier="cold",last_failure="rejected"} 2`,
		`infohash_status_overdue_retries{tier="cold",last_failure="timeout"} 0`,
		`infohash_status_overdue{tier="hot",kind="retry"} 9`,
	} {
		if !strings.Contains(prom, line+"\n") {
			t.Errorf("metrics lack %q:\n%s", line, prom)
		}
	}
	if got := strings.Count(prom, "\ninfohash_status_overdue_retries{"); got != len(WaveTiers)*len(FailureLabels()) {
		t.Errorf("%d overdue_retries series, want %d (a fixed label set)", got, len(WaveTiers)*len(FailureLabels()))
	}

	var text strings.Builder
	r.Print(&text)
	line := "  overdue retries by last failure: hot: no_peers 3, other 2, timeout 2, 2 more; cold: rejected 2, no_peers 1\n"
	if !strings.Contains(text.String(), line) {
		t.Errorf("text lacks %q:\n%s", line, text.String())
	}
}

// TestOverdueByFailureLineOnlyWhenOverdue: the text has no such line when
// no retry is overdue (nor when the blocklist is unreadable: nothing
// counted).
func TestOverdueByFailureLineOnlyWhenOverdue(t *testing.T) {
	for name, r := range map[string]*Report{
		"none overdue": {WavesBy: newWavesBy(), OverdueByFailure: newOverdueCounter().counts()},
		"not counted":  {},
	} {
		var text strings.Builder
		r.Print(&text)
		if strings.Contains(text.String(), "overdue retries by last failure") {
			t.Errorf("%s: text has the overdue retries line:\n%s", name, text.String())
		}
	}
}

// TestOverdueCounter: each row counts under its own class whatever the
// row before it was (the counter keeps the last class's index), an
// empty or unknown class under other.
func TestOverdueCounter(t *testing.T) {
	for _, tt := range []struct {
		name    string
		classes []string
		want    map[string]int64 // hot
	}{
		{"empty first", []string{"", "no_peers", ""}, map[string]int64{"other": 2, "no_peers": 1}},
		{"unknown then known", []string{"weird", "timeout", "timeout", "weird"}, map[string]int64{"other": 2, "timeout": 2}},
		{"other by name", []string{"other", "rejected"}, map[string]int64{"other": 1, "rejected": 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newOverdueCounter()
			for _, cl := range tt.classes {
				c.add("hot", cl)
			}
			c.add("cold", "no_peers")
			got := c.counts()
			for _, l := range FailureLabels() {
				if got["hot"][l] != tt.want[l] {
					t.Errorf("hot %s = %d, want %d", l, got["hot"][l], tt.want[l])
				}
			}
			if got["cold"]["no_peers"] != 1 {
				t.Errorf("cold no_peers = %d, want 1", got["cold"]["no_peers"])
			}
		})
	}
}
