package fetch

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/goldentest"
	"github.com/infohash/infohash/internal/metrics"
)

// TestOKPerSec: the rate counts ok results (jobs done), not the info
// dictionaries verified, of which a job may have two; its name says so.
func TestOKPerSec(t *testing.T) {
	c := newCounters()
	c.verified.Add(3) // two peers of one job verified at once, and one more job
	c.addOutcome(schema.OutcomeOK, nil)
	c.addOutcome(schema.OutcomeOK, nil)
	c.addOutcome(schema.OutcomeTimeout, []string{schema.OutcomeTimeout})
	s := c.snapshot(4 * time.Second)
	if s.OKPerSec != 0.5 {
		t.Errorf("OKPerSec = %v, want 0.5 (2 ok in 4 s)", s.OKPerSec)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["ok_per_sec"] != 0.5 {
		t.Errorf("ok_per_sec = %v, want 0.5 in %s", m["ok_per_sec"], b)
	}
	if _, ok := m["verified_per_sec"]; ok {
		t.Errorf("verified_per_sec still written: %s", b)
	}
}

// TestStatsMetrics: --metrics-file labels the outcomes by outcome and the
// peer failures by class, and writes every one of them, at 0 when no
// attempt or peer ended so (testdata/metrics.prom; go test -update
// rewrites it).
func TestStatsMetrics(t *testing.T) {
	c := newCounters()
	c.jobs.Add(4)
	c.attempted.Add(3)
	c.outOfReach.Add(2)
	c.connects.Add(6)
	c.connectsOK.Add(3)
	c.connectsFailed.Add(2)
	c.connectsCancelled.Add(1)
	c.handshakes.Add(3)
	c.metadataReceived.Add(2)
	c.verified.Add(2)
	c.v2ClaimsRefuted.Add(1)
	c.addOutcome(schema.OutcomeOK, []string{schema.OutcomeConnectFailed})
	c.addOutcome(schema.OutcomeOK, nil)
	c.addOutcome(schema.OutcomeNoUTMetadata, []string{schema.OutcomeNoUTMetadata, schema.OutcomeConnectFailed})
	for name, s := range map[string]Stats{"metrics.prom": c.snapshot(2 * time.Second), "metrics-empty.prom": {}} {
		t.Run(name, func(t *testing.T) {
			b, err := metrics.Render("fetch", s, metrics.Run{Duration: 2 * time.Second, At: time.Unix(1780000000, 0)})
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", name)
			goldentest.Check(t, path, b, *update)
		})
	}
}

// TestStatsText: the summary on stderr (testdata/summary*.txt; go test
// -update rewrites them) shows every way a dial ended, so that its connects
// add up: ok, failed, cancelled (by us, or the job's deadline) and local
// errors. The cancelled ones were in none of the counts shown.
func TestStatsText(t *testing.T) {
	c := newCounters()
	c.jobs.Add(4)
	c.attempted.Add(4)
	c.lookups.Add(4)
	c.peersFound.Add(6)
	c.connects.Add(6)
	c.connectsOK.Add(2)
	c.connectsFailed.Add(1)
	c.connectsCancelled.Add(2)
	c.connectsLocal.Add(1)
	c.handshakes.Add(2)
	c.extensionSupport.Add(2)
	c.utMetadataSupport.Add(1)
	c.metadataReceived.Add(1)
	c.verified.Add(1)
	c.addOutcome(schema.OutcomeOK, nil)
	c.addOutcome(schema.OutcomeConnectFailed, []string{schema.OutcomeConnectFailed})
	c.addOutcome(schema.OutcomeLocalError, nil)
	c.addOutcome(schema.OutcomeNoUTMetadata, []string{schema.OutcomeNoUTMetadata})
	// Peers out of reach (summary-out-of-reach.txt) and refuted v2
	// claims (summary-refuted.txt) are shown only when there were some.
	for _, tt := range []struct {
		golden              string
		outOfReach, refuted int64
	}{{"summary.txt", 0, 0}, {"summary-out-of-reach.txt", 3, 0}, {"summary-refuted.txt", 0, 1}} {
		t.Run(tt.golden, func(t *testing.T) {
			s := c.snapshot(2 * time.Second)
			s.PeersOutOfReach, s.V2ClaimsRefuted = tt.outOfReach, tt.refuted
			var b strings.Builder
			if err := s.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			goldentest.Check(t, filepath.Join("testdata", tt.golden), []byte(b.String()), *update)
		})
	}
}

// TestStatsTextPlural: the summary's counts of jobs, repeated rows and
// released leases take the singular for 1 (testdata/summary-one.txt) and
// the plural otherwise (summary-two.txt); it said "1 jobs".
func TestStatsTextPlural(t *testing.T) {
	for _, tt := range []struct {
		golden string
		n      int64
	}{{"summary-one.txt", 1}, {"summary-two.txt", 2}} {
		t.Run(tt.golden, func(t *testing.T) {
			s := Stats{Jobs: tt.n, Duplicates: tt.n, Unfinished: tt.n, Released: tt.n, ElapsedMs: 1000}
			var b strings.Builder
			if err := s.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			goldentest.Check(t, filepath.Join("testdata", tt.golden), []byte(b.String()), *update)
		})
	}
}

// TestStoppedShort: the error of a run that stopped short counts its
// jobs and released leases in the singular for 1 ("1 jobs attempted"
// before) and the plural otherwise.
func TestStoppedShort(t *testing.T) {
	for _, tt := range []struct {
		s    Stats
		want string
	}{
		{Stats{Attempted: 1, Unfinished: 1, Released: 1}, "1 job attempted, 1 job unfinished (1 lease released)"},
		{Stats{Attempted: 0, Unfinished: 2, Released: 0}, "0 jobs attempted, 2 jobs unfinished (0 leases released)"},
		{Stats{Attempted: 3, Unfinished: 5, Released: 2}, "3 jobs attempted, 5 jobs unfinished (2 leases released)"},
	} {
		if got := tt.s.stoppedShort(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.s, got, tt.want)
		}
	}
}
