package cron

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCrawlPassTrailingSlash: a DATA_DIR, EXPORT_DIR and METRICS_DIR
// given with a trailing slash (as shell completion types a folder) are
// logged and passed to the steps without it: the log said
// "DIR//work/PASS" and "--data DIR/" (and METRICS_DIR's files
// "METRICS_DIR//infohash_dedup.prom"). The pass runs as it does without
// the slashes.
func TestCrawlPassTrailingSlash(t *testing.T) {
	for _, tt := range []struct{ name, slashes string }{
		{"one slash", "/"},
		{"two slashes", "//"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			top := t.TempDir()
			data, export, metrics := filepath.Join(top, "ds"), filepath.Join(top, "exp"), filepath.Join(top, "metrics")
			for _, d := range []string{export, metrics} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			log := runPass(t, data+tt.slashes, "s1", "1s", 0, "EXPORT_DIR="+export+tt.slashes, "METRICS_DIR="+metrics+tt.slashes)
			if strings.Contains(log, "//") {
				t.Errorf("the log has a doubled slash:\n%s", regexp.MustCompile(`(?m)^.*//.*$`).FindAllString(log, -1))
			}
			for _, want := range []string{"--data " + data + " ", filepath.Join(data, "work", "s1")} {
				if !strings.Contains(log, want) {
					t.Errorf("the log lacks %q:\n%s", want, log)
				}
			}
			if strings.Contains(log, data+"/ ") {
				t.Errorf("the log names DATA_DIR with its trailing slash:\n%s", log)
			}
			if p := filepath.Join(metrics, "infohash_crawl_pass.prom"); !exists(p) {
				t.Errorf("no %s; log:\n%s", p, log)
			}
		})
	}
}
