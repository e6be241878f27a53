package app

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/infohash/infohash/pipeline/status"
)

// TestStatusJSONWavesInTimeOrder: status --format json lists the keys of
// retry_waves, and of each tier and kind of retry_waves_by_tier_and_kind,
// in time order, overdue first and later last, as the text prints the
// waves (they came by name: within_1d before within_1h).
func TestStatusJSONWavesInTimeOrder(t *testing.T) {
	_, data := seedDataset(t)
	out, stderr, code := runMain(t, "status", "--data", data, "--far-now", "--now", "2026-03-01T00:00:00Z", "--format", "json")
	if code != 0 {
		t.Fatalf("status: exit %d: %s", code, stderr)
	}
	var want []string
	for _, wv := range status.Waves {
		want = append(want, wv.Name)
	}
	// Every object of waves: retry_waves and the split's innermost
	// objects (2 tiers × 2 kinds).
	objects := regexp.MustCompile(`\{[^{}]*"`+want[0]+`"[^{}]*\}`).FindAllString(out, -1)
	if len(objects) != 1+len(status.WaveTiers)*len(status.WaveKinds) || !strings.Contains(out, `"retry_waves": {`) {
		t.Fatalf("%d objects of waves (with %s), want %d (retry_waves and its split):\n%s",
			len(objects), want[0], 1+len(status.WaveTiers)*len(status.WaveKinds), out)
	}
	for _, obj := range objects {
		var keys []string
		for _, m := range regexp.MustCompile(`"([a-z0-9_]+)":`).FindAllStringSubmatch(obj, -1) {
			keys = append(keys, m[1])
		}
		if strings.Join(keys, " ") != strings.Join(want, " ") {
			t.Errorf("wave keys %v, want %v", keys, want)
		}
	}
}

// TestStatusJSONTimesInMillis: status --format json gives committed_at and
// now in UTC to the millisecond, as its other times (last_input.at); both
// came out with nanoseconds (the commit's wall clock, --now as given).
func TestStatusJSONTimesInMillis(t *testing.T) {
	_, data := seedDataset(t)
	out, stderr, code := runMain(t, "status", "--data", data, "--far-now", "--now", "2026-03-01T02:00:00.123456789+02:00", "--format", "json")
	if code != 0 {
		t.Fatalf("status: exit %d: %s", code, stderr)
	}
	var r struct {
		CommittedAt string `json:"committed_at"`
		Now         string `json:"now"`
		LastInput   struct {
			At string `json:"at"`
		} `json:"last_input"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if r.Now != "2026-03-01T00:00:00.123Z" {
		t.Errorf("now %q, want 2026-03-01T00:00:00.123Z", r.Now)
	}
	ms := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,3})?Z$`)
	for name, v := range map[string]string{"committed_at": r.CommittedAt, "last_input.at": r.LastInput.At} {
		if !ms.MatchString(v) {
			t.Errorf("%s %q: want RFC 3339 in UTC, to the millisecond", name, v)
		}
	}
}
