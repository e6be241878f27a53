package cron

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/infohash/infohash/internal/dhtstate"
)

// gauge returns the value of the sample named name in the Prometheus text
// file path, or "" when it has none.
func gauge(t *testing.T, path, name string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindSubmatch(b)
	if m == nil {
		return ""
	}
	return string(m[1])
}

// With METRICS_DIR, a pass writes status's gauges (the ones README says to
// alert on) and its own: its exit status and duration, and the time of the
// last pass that exited 0, which a pass locked out (exit 75) keeps. Nothing
// is left in the folder under a temporary name.
func TestCrawlPassMetrics(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ds")
	dir := t.TempDir()
	log := runPass(t, data, "m1", "1s", 0, "METRICS_DIR="+dir)
	status := filepath.Join(dir, "infohash_status.prom")
	if !exists(status) || gauge(t, status, `infohash_status_overdue{tier="hot",kind="retry"}`) == "" {
		t.Fatalf("no infohash_status_overdue in %s; log:\n%s", status, log)
	}
	pass := filepath.Join(dir, "infohash_crawl_pass.prom")
	if !exists(pass) {
		t.Fatalf("no %s; log:\n%s", pass, log)
	}
	if got := gauge(t, pass, "infohash_crawl_pass_exit_status"); got != "0" {
		t.Errorf("exit_status %q after a pass that exited 0", got)
	}
	if got := gauge(t, pass, "infohash_crawl_pass_run_duration_seconds"); !regexp.MustCompile(`^[0-9]+\.[0-9]{6}$`).MatchString(got) || got == "0.000000" {
		t.Errorf("run_duration_seconds %q: want the pass's length", got)
	}
	last := gauge(t, pass, "infohash_crawl_pass_last_success_timestamp_seconds")
	if last == "" {
		t.Fatalf("no last_success_timestamp_seconds after a pass that exited 0:\n%s", readFile(t, pass))
	}

	release, err := dhtstate.Lock(filepath.Join(data, "dht-state"), "lock", "capture")
	if err != nil {
		t.Fatal(err)
	}
	log = runPass(t, data, "m2", "1s", 75, "METRICS_DIR="+dir)
	release()
	if got := gauge(t, pass, "infohash_crawl_pass_exit_status"); got != "75" {
		t.Errorf("exit_status %q after a pass locked out, want 75; log:\n%s", got, log)
	}
	if got := gauge(t, pass, "infohash_crawl_pass_last_success_timestamp_seconds"); got != last {
		t.Errorf("last_success_timestamp_seconds %q after a pass locked out, want the last success's %q", got, last)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if filepath.Ext(e.Name()) != ".prom" {
			t.Errorf("%s left in METRICS_DIR", e.Name())
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
