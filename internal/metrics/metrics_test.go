package metrics

import (
	"os"
	"path/filepath"
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
	p := filepath.Join(t.TempDir(), "ih.prom")
	if err := Write(p, "fetch", stats{}, time.Second, time.Now()); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); !strings.Contains(string(b), "infohash_fetch_observations_read 0") {
		t.Fatalf("file: %s", b)
	}
}
