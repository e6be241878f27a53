package cron

import (
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// TestCrawlPassWarnsOfUnknownVariables: an environment variable that
// looks like one of the pass's (its prefixes) but is not one it reads
// gets one WARN line on stderr naming it (and the name it resembles),
// and the pass goes on (exit 0); the variables it reads, infohash's
// INFOHASH_DATA and others' (DATABASE_URL) get none.
func TestCrawlPassWarnsOfUnknownVariables(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ds")
	log := runPass(t, data, "w1", "1s", 0, "DATADIR=/srv/ih", "INFOHASH_DATADIR=/srv/ih", "EXPORTDIR=/srv/export",
		"METRICS_DIRECTORY=/var/lib/node", "KEEP_PASS=3", "INFOHASH_DATA="+data, "DATABASE_URL=postgres://x", "LIMIT=10")
	want := map[string]string{
		"DATADIR":           "DATA_DIR is an argument (crawl-pass.sh DATA_DIR [CAPTURE_DURATION]), not a variable",
		"INFOHASH_DATADIR":  "DATA_DIR is an argument (crawl-pass.sh DATA_DIR [CAPTURE_DURATION]), not a variable",
		"EXPORTDIR":         "did you mean EXPORT_DIR?",
		"METRICS_DIRECTORY": "--help lists the variables it reads",
		"KEEP_PASS":         "--help lists the variables it reads",
	}
	re := regexp.MustCompile(`(?m)^\S+ crawl-pass w1: WARN: environment variable (\S+) is not one crawl-pass.sh reads: ignored; (.*)$`)
	var got []string
	for _, m := range re.FindAllStringSubmatch(log, -1) {
		got = append(got, m[1])
		if want[m[1]] != m[2] {
			t.Errorf("the warning of %s ends %q, want %q", m[1], m[2], want[m[1]])
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"DATADIR", "EXPORTDIR", "INFOHASH_DATADIR", "KEEP_PASS", "METRICS_DIRECTORY"}) {
		t.Errorf("warned of %q, want one line each for the 5 unknown names; log:\n%s", got, log)
	}
}
