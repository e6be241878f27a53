package app

import (
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
