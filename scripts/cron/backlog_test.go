package cron

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A pass whose plan and the two plans before it (the newest pass folders
// holding a plan.json) each left more than 10 x LIMIT due hashes
// unplanned logs one WARN line saying so; a plan at 10 x LIMIT or fewer
// than three plans, none. The earlier passes are folders holding only
// their plan.json; this pass's own plan leaves 39 of 40 due hashes
// (LIMIT=1).
func TestCrawlPassBacklogWarning(t *testing.T) {
	tests := []struct {
		name    string
		earlier []int // the earlier plans' due_unplanned, oldest first; -1: a pass folder with no plan
		warn    bool
	}{
		{name: "three plans above", earlier: []int{100, -1, 11}, warn: true},
		{name: "one at 10 x LIMIT", earlier: []int{100, 10}},
		{name: "two plans only", earlier: []int{-1, 100}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ds")
			seed := filepath.Join(t.TempDir(), "seed.txt")
			hexList(t, seed, hashes(1, 40)...)
			ih(t, "dedup", "--data", data, seed)
			for i, n := range tt.earlier {
				dir := filepath.Join(data, "work", fmt.Sprintf("e%d", i))
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				files := map[string]string{".pass.seq": fmt.Sprintf("%d\n", i+1), "capture.json": "{}\n"}
				if n >= 0 {
					files["plan.json"] = fmt.Sprintf("{\n  \"due\": %d,\n  \"due_unplanned\": %d\n}\n", n+1, n)
				}
				for name, body := range files {
					if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			log := runPass(t, data, "b", "1s", 0, "LIMIT=1")
			if n := statsJSON(t, filepath.Join(data, "work", "b", "plan.json"))["due_unplanned"]; n != 39 {
				t.Fatalf("the pass's plan left %v due hashes unplanned, want 39; log:\n%s", n, log)
			}
			want := "plan-retries: WARN: the last 3 plans each left more than 10 x LIMIT (10) due hashes unplanned (due_unplanned 39 11 100, newest first)"
			if got := strings.Count(log, "plan-retries: WARN"); tt.warn && (got != 1 || !strings.Contains(log, want)) {
				t.Errorf("want one line %q...; log:\n%s", want, log)
			} else if !tt.warn && got != 0 {
				t.Errorf("a backlog WARN line; log:\n%s", log)
			}
		})
	}
}
