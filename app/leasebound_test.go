package app

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlanRetriesWarnsLimitOverLease: a --limit above what fetch with its
// defaults (--concurrency 100, --timeout 30s) is sure to attempt within
// the lease (100 x lease / 30s: 24000 in the policy's default 2h) gets
// one warning with the numbers and what to do, and the run goes on
// (exit 0); a --limit at the bound gets none. The lease is --lease, or
// the policy's.
func TestPlanRetriesWarnsLimitOverLease(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	if _, stderr, code := runMainIn(t, []byte(committedHash+"\n"), "dedup", "--data", data, "--now", "2026-03-01T00:00:00Z", "-"); code != 0 {
		t.Fatalf("dedup: exit %d: %s", code, stderr)
	}
	tests := []struct {
		name   string
		policy string // plan.lease set before the run ("": the default, 2h)
		args   []string
		want   string // in the warning ("": no warning)
		not    string // not in it
	}{
		{name: "default lease, at the bound", args: []string{"--limit", "24000"}},
		{name: "default lease, above the bound", args: []string{"--limit", "24001"},
			want: "--limit 24001 is more than fetch with its defaults (--concurrency 100, --timeout 30s) is sure to attempt within the 2h lease: 24000 (concurrency x lease / timeout)"},
		{name: "the advice", args: []string{"--limit", "100000"},
			want: "give --lease 8h20m or more, fetch --concurrency 417 or more (or a shorter --timeout), or --limit 24000 or less"},
		// A lease long enough would be over schedule.MaxLease (7d),
		// which is refused: not advised.
		{name: "the advice past the longest lease", args: []string{"--limit", "3000000"},
			want: "give fetch --concurrency 12500 or more (or a shorter --timeout), or --limit 24000 or less\"", not: "give --lease"},
		// A --limit so large that the lease it needs, in nanoseconds,
		// is past int64: no lease is long enough (the advice said
		// "--lease 57s600ms or more", an overflowed Duration).
		{name: "the largest --limit", args: []string{"--limit", "9223372036854775807"},
			want: "give --limit 24000 or less\"", not: "give --lease"},
		{name: "--lease, at the bound", args: []string{"--limit", "12000", "--lease", "1h"}},
		{name: "--lease, above the bound", args: []string{"--limit", "12001", "--lease", "1h"}, want: "within the 1h lease: 12000"},
		{name: "the policy's lease, at the bound", policy: "4h", args: []string{"--limit", "48000"}},
		{name: "the policy's lease, above the bound", policy: "4h", args: []string{"--limit", "48001"}, want: "within the 4h lease: 48000"},
		// A lease under timeout / concurrency: fetch is sure of no job,
		// and --limit 0 would be a dry run, no advice.
		{name: "a lease too short for any job", args: []string{"--limit", "10", "--lease", "100ms"},
			want: "within the 100ms lease: 0 (concurrency x lease / timeout); the jobs it has not started by lease_until it skips (lease_expired) and a later pass plans again: give --lease 1m or more, fetch --concurrency 3000 or more (or a shorter --timeout)\"",
			not:  "--limit 0 or less"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lease := "2h"
			if tt.policy != "" {
				lease = tt.policy
			}
			if _, stderr, code := runMain(t, "policy", "set", "--data", data, "plan.lease="+lease); code != 0 {
				t.Fatalf("policy set: exit %d: %s", code, stderr)
			}
			out := filepath.Join(dir, "jobs"+string(rune('a'+i))+".parquet")
			args := append([]string{"plan-retries", "--data", data, "--now", "2026-03-01T00:01:00Z", "-o", out}, tt.args...)
			_, stderr, code := runMain(t, args...)
			if code != 0 {
				t.Fatalf("exit %d, want 0: %s", code, stderr)
			}
			warns := strings.Count(stderr, "level=WARN")
			switch {
			case tt.want == "" && warns != 0:
				t.Fatalf("a warning at or below the bound:\n%s", stderr)
			case tt.want != "" && (warns != 1 || !strings.Contains(stderr, tt.want)):
				t.Fatalf("want one warning saying %q:\n%s", tt.want, stderr)
			case tt.not != "" && strings.Contains(stderr, tt.not):
				t.Fatalf("the warning says %q:\n%s", tt.not, stderr)
			}
		})
	}
}

// TestPlanRetriesDueUnplanned: the final log line and --stats-json say how
// many due hashes the pass left unplanned (due less planned).
func TestPlanRetriesDueUnplanned(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ih")
	seedHashes(t, data, 5, 3)
	for _, tt := range []struct {
		limit string
		want  float64
	}{{"0", 5}, {"2", 3}} { // --limit 0 leases nothing
		t.Run("--limit "+tt.limit, func(t *testing.T) {
			stats := filepath.Join(dir, "plan"+tt.limit+".json")
			_, stderr, code := runMain(t, "plan-retries", "--data", data, "--far-now", "--now", "2026-03-01T00:01:00Z",
				"--limit", tt.limit, "--stats-json", stats, "-o", filepath.Join(dir, "jobs"+tt.limit+".parquet"))
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			got := readPlanStats(t, stats)
			if got["due"] != 5.0 || got["due_unplanned"] != tt.want {
				t.Errorf("--stats-json: due %v, due_unplanned %v; want 5 and %v: %v", got["due"], got["due_unplanned"], tt.want, got)
			}
			if want := fmt.Sprintf("due_unplanned=%v ", tt.want); !strings.Contains(stderr, want) {
				t.Errorf("the final line lacks %q:\n%s", want, stderr)
			}
		})
	}
}
