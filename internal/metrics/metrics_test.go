package metrics

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/internal/goldentest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

type inner struct {
	Added int64  `json:"hashes_added"`
	Done  bool   `json:"already_merged"`
	From  string `json:"from"`
}

type stats struct {
	Read     int64            `json:"observations_read"`
	Rate     float64          `json:"rate"`
	ByClass  map[string]int64 `json:"by_class"`
	ByMethod map[string]int64 `json:"by_method"`
	Done     bool             `json:"done"`
	Note     string           `json:"note"`
	Union    *inner           `json:"union,omitempty"`
	Hidden   map[string]int64 `json:"-"`
}

func (stats) MetricLabels() map[string]Label {
	return map[string]Label{
		"by_class":  {Name: "class", Known: []string{"no_peers", "ok", "timeout"}},
		"by_method": {Name: "method", Known: []string{"ping", "get_peers"}},
	}
}

// unlabeled has a map counter and no Labeler.
type unlabeled struct {
	Outcomes map[string]int64 `json:"outcomes"`
}

func TestRender(t *testing.T) {
	at := time.Unix(1700000000, 0)
	full := stats{Read: 12, Rate: 0.5, ByClass: map[string]int64{"no_peers": 3, "ok": 9, "rare": 1}, Done: true, Note: "x",
		Union: &inner{Added: 4, Done: true, From: "/srv/other"}}
	for _, tt := range []struct {
		golden string
		stats  any
		run    Run
	}{
		{"ok.prom", full, Run{Duration: 1500 * time.Millisecond, At: at}},
		{"zero.prom", stats{}, Run{Duration: time.Second, At: at}},
		{"partial.prom", full, Run{Duration: time.Second, At: at, Exit: 3, LastSuccess: 1600000000}},
		{"partial-first.prom", full, Run{Duration: time.Second, At: at, Exit: 3}},
		// A run that ended before it counted anything: the run's gauges only.
		{"locked.prom", nil, Run{Duration: time.Second, At: at, Exit: 75, LastSuccess: 1600000000}},
		{"locked-first.prom", nil, Run{Duration: time.Second, At: at, Exit: 75}},
		{"nothing-ok.prom", nil, Run{Duration: time.Second, At: at}},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			b, err := Render("dedup", tt.stats, tt.run)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tt.golden, string(b))
		})
	}
}

func TestRenderRefusesUnlabeledMap(t *testing.T) {
	_, err := Render("fetch", unlabeled{Outcomes: map[string]int64{"ok": 1}}, Run{})
	if err == nil || !strings.Contains(err.Error(), "map outcomes has no label") {
		t.Fatalf("err %v; want one naming the map", err)
	}
}

func TestLastSuccess(t *testing.T) {
	ok, err := Render("dedup", stats{}, Run{At: time.Unix(1700000000, 0)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name    string
		old     string
		command string
		want    float64
	}{
		{"a file Render wrote", string(ok), "dedup", 1700000000},
		{"another command's", string(ok), "merge", 0},
		{"none", "", "dedup", 0},
		{"not a number", "infohash_dedup_last_success_timestamp_seconds x\n", "dedup", 0},
		{"a longer name", "infohash_dedup_last_success_timestamp_seconds_x 5\n", "dedup", 0},
		{"plan-retries", "infohash_plan_retries_last_success_timestamp_seconds 1.5e9\n", "plan-retries", 1.5e9},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := LastSuccess([]byte(tt.old), tt.command); got != tt.want {
				t.Errorf("LastSuccess = %v, want %v", got, tt.want)
			}
		})
	}
}

// golden compares got with testdata/name (go test -update rewrites it).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	goldentest.Check(t, path, []byte(got), *update)
}
