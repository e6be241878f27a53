package metrics

import (
	"strings"
	"testing"
	"time"
)

type stats struct {
	Read    int64            `json:"observations_read"`
	Rate    float64          `json:"rate"`
	ByClass map[string]int64 `json:"by_class"`
	Done    bool             `json:"done"`
	Note    string           `json:"note"`
}

func TestRender(t *testing.T) {
	b, err := Render("dedup", stats{Read: 12, Rate: 0.5, ByClass: map[string]int64{"no_peers": 3, "ok": 9}, Done: true, Note: "x"},
		1500*time.Millisecond, time.Unix(1700000000, 0))
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, want := range []string{
		"# TYPE infohash_dedup_observations_read gauge\ninfohash_dedup_observations_read 12\n",
		"infohash_dedup_rate 0.5\n",
		`infohash_dedup_by_class{key="no_peers"} 3` + "\n",
		"infohash_dedup_done 1\n",
		"infohash_dedup_run_duration_seconds 1.5\n",
		"infohash_dedup_last_success_timestamp_seconds 1700000000\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "note") {
		t.Error("string field rendered")
	}
}
