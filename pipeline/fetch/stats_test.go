package fetch

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
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
