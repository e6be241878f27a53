package capture

import (
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/internal/metrics"
)

// TestStatsMetrics: --metrics-file labels the incoming queries by method
// and writes every method counted, at 0 when none came (a nil map too).
func TestStatsMetrics(t *testing.T) {
	var c counters
	c.queries[mGetPeers].Add(7)
	for name, s := range map[string]Stats{"counted": c.stats(), "nil map": {}} {
		t.Run(name, func(t *testing.T) {
			b, err := metrics.Render("capture", s, metrics.Run{At: time.Unix(1780000000, 0)})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range methods {
				want := `infohash_capture_queries_by_method{method="` + m + `"} 0` + "\n"
				if m == "get_peers" && name == "counted" {
					want = strings.Replace(want, "} 0", "} 7", 1)
				}
				if !strings.Contains(string(b), want) {
					t.Errorf("missing %q in\n%s", want, b)
				}
			}
		})
	}
}
