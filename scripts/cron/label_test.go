package cron

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/infohash/infohash/internal/metrics"
	"golang.org/x/sys/unix"
)

// With METRICS_LABEL, two datasets' passes share one METRICS_DIR: each
// writes its files under names of its own (infohash_STEP.LABELS.prom),
// every series of every file carries its labels, and no series is in two
// files (node_exporter's textfile collector refuses those). A bad
// METRICS_LABEL is a usage error, exit 2, and writes no file.
func TestCrawlPassMetricsLabel(t *testing.T) {
	dir := t.TempDir()
	for _, ds := range []struct{ name, label string }{{"main", "dataset=main"}, {"test", `dataset=te"st\,host=h1`}} {
		runPass(t, filepath.Join(t.TempDir(), "ds"), "m1", "1s", 0, "METRICS_DIR="+dir, "METRICS_LABEL="+ds.label)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.prom"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{".dataset=main.prom": `{dataset="main"`, `.dataset=te_st_,host=h1.prom`: `{dataset="te\"st\\",host="h1"`}
	steps := []string{"capture", "dedup", "plan_retries", "fetch", "merge", "export", "status", "crawl_pass"}
	if len(files) != 2*len(steps) {
		t.Errorf("%d files in METRICS_DIR, want %d: %v", len(files), 2*len(steps), files)
	}
	series := map[string]string{}
	for suffix, labels := range want {
		for _, step := range steps {
			p := filepath.Join(dir, "infohash_"+step+suffix)
			if !slices.Contains(files, p) {
				t.Errorf("no %s", p)
				continue
			}
			for line := range strings.Lines(readFile(t, p)) {
				if strings.HasPrefix(line, "#") {
					continue
				}
				name, _, _ := strings.Cut(line, "{")
				if !strings.HasPrefix(line[len(name):], labels) {
					t.Errorf("%s: %q lacks %s", p, line, labels)
				}
				s := line[:strings.LastIndexByte(line, ' ')]
				if other, ok := series[s]; ok {
					t.Errorf("series %s in both %s and %s", s, other, p)
				}
				series[s] = p
			}
		}
	}
	// A second pass reads its last success back from the labelled file.
	data := filepath.Join(t.TempDir(), "ds")
	runPass(t, data, "m1", "1s", 0, "METRICS_DIR="+dir, "METRICS_LABEL=dataset=x")
	p := filepath.Join(dir, "infohash_crawl_pass.dataset=x.prom")
	last := gauge(t, p, `infohash_crawl_pass_last_success_timestamp_seconds{dataset="x"}`)
	if err := os.MkdirAll(filepath.Join(data, "work"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(data, "work", ".pass.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	// Locked out by another pass: its metrics are that pass's to write
	// (a 75 would alert while it runs well), so the file stays.
	runPass(t, data, "m2", "1s", 75, "METRICS_DIR="+dir, "METRICS_LABEL=dataset=x")
	if got := gauge(t, p, `infohash_crawl_pass_exit_status{dataset="x"}`); got != "0" || last == "" ||
		gauge(t, p, `infohash_crawl_pass_last_success_timestamp_seconds{dataset="x"}`) != last {
		t.Errorf("after a locked pass (last success %q):\n%s", last, readFile(t, p))
	}

	for _, bad := range []string{"tier=hot", "__x=1", "data-set=a", "dataset", "dataset=", "a=1,a=2"} {
		empty := t.TempDir()
		log := runPass(t, filepath.Join(t.TempDir(), "ds"), "b1", "1s", 2, "METRICS_DIR="+empty, "METRICS_LABEL="+bad)
		if !strings.Contains(log, "METRICS_LABEL="+bad+": ") {
			t.Errorf("METRICS_LABEL=%s: the log does not say why:\n%s", bad, log)
		}
		if ents, _ := os.ReadDir(empty); len(ents) > 0 {
			t.Errorf("METRICS_LABEL=%s wrote %v", bad, ents)
		}
	}
}

// The labels crawl-pass.sh refuses in METRICS_LABEL are infohash's
// (metrics.Reserved).
func TestCrawlPassReservedLabels(t *testing.T) {
	b, err := os.ReadFile("crawl-pass.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`case " (class [a-z_ ]+) " in`).FindSubmatch(b)
	if m == nil {
		t.Fatal("crawl-pass.sh: no list of reserved labels")
	}
	if got, want := string(m[1]), strings.Join(metrics.Reserved, " "); got != want {
		t.Errorf("crawl-pass.sh refuses %q, infohash %q", got, want)
	}
}
