package cron

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCrawlPassPathsWithSpaces: a pass over a DATA_DIR and a METRICS_DIR
// whose paths hold a space (and a non-ASCII letter) runs every step and
// writes every metrics file: $(metrics STEP) was split at METRICS_DIR's
// space, and capture refused the rest as an argument (exit 2). Each
// step's logged command line reads back, pasted into a shell, as the
// arguments the step got: it was "$*", "--data my data" for two words.
func TestCrawlPassPathsWithSpaces(t *testing.T) {
	top := t.TempDir()
	data, metrics := filepath.Join(top, "my data ü"), filepath.Join(top, "metrics dir")
	if err := os.Mkdir(metrics, 0o755); err != nil {
		t.Fatal(err)
	}
	log := runPass(t, data, "s1", "1s", 0, "METRICS_DIR="+metrics)
	for _, f := range []string{"capture", "dedup", "plan_retries", "fetch", "merge", "export", "status", "crawl_pass"} {
		if p := filepath.Join(metrics, "infohash_"+f+".prom"); !exists(p) {
			t.Errorf("no %s; log:\n%s", p, log)
		}
	}
	for _, step := range []string{"capture", "dedup", "export"} {
		m := regexp.MustCompile(`(?m)crawl-pass s1: ` + step + `: (.*` + regexp.QuoteMeta(bin) + `.*)$`).FindStringSubmatch(log)
		if m == nil {
			t.Errorf("no %s command line in the log:\n%s", step, log)
			continue
		}
		// The shell's reading of the logged line, one argument a line.
		out, err := exec.Command("bash", "-c", `eval "set -- $0"; printf '%s\n' "$@"`, m[1]).Output()
		if err != nil {
			t.Fatalf("the logged %s line %q does not parse: %v", step, m[1], err)
		}
		args := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		want := []string{"--data", data}
		if !containsSeq(args, want) || !containsSeq(args, []string{"--metrics-file=" + filepath.Join(metrics, "infohash_"+step+".prom")}) {
			t.Errorf("the logged %s line %q reads back as %q: want %q and its --metrics-file as one argument each", step, m[1], args, want)
		}
	}
}

// containsSeq reports whether want appears in args, in order, adjacent.
func containsSeq(args, want []string) bool {
	for i := 0; i+len(want) <= len(args); i++ {
		if strings.Join(args[i:i+len(want)], "\x00") == strings.Join(want, "\x00") {
			return true
		}
	}
	return false
}
