package cron

import (
	"path/filepath"
	"testing"

	"github.com/infohash/infohash/internal/dhtstate"
)

// A pass that ran every step but ended partial (exit 3: with PASS_BUDGET a
// busy pass's fetch is cut every time) moves
// last_completed_timestamp_seconds, not last_success_timestamp_seconds,
// which it used to leave as the only one, never moving; a pass locked out
// (exit 75) moves neither.
func TestCrawlPassCompletedGauge(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ds")
	dir := t.TempDir()
	pass := filepath.Join(dir, "infohash_crawl_pass.prom")
	partial := script(t, "infohash", `if [ "$1" = fetch ]; then `+bin+` "$@"; exit 3; fi
exec `+bin+` "$@"`)
	log := runPass(t, data, "p1", "1s", 3, "METRICS_DIR="+dir, "INFOHASH="+partial)
	done := gauge(t, pass, "infohash_crawl_pass_last_completed_timestamp_seconds")
	if done == "" || gauge(t, pass, "infohash_crawl_pass_last_success_timestamp_seconds") != "" {
		t.Fatalf("after a partial pass: want last_completed and no last_success:\n%s\nlog:\n%s", readFile(t, pass), log)
	}
	release, err := dhtstate.Lock(filepath.Join(data, "dht-state"), "lock", "capture")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	runPass(t, data, "p2", "1s", 75, "METRICS_DIR="+dir)
	if got := gauge(t, pass, "infohash_crawl_pass_last_completed_timestamp_seconds"); got != done {
		t.Errorf("last_completed %q after a pass locked out, want %q kept", got, done)
	}
}
