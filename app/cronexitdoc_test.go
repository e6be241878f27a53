package app

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestCronExitCodesSayBadInputGoesOn: README's cron paragraph and
// crawl-pass.sh --help say that exit 1 and 2 stop a pass but for a file
// found bad input, which is set aside while the pass goes on and ends 2.
// README said "1 and 2 stop" and, further on, that the pass goes on; the
// script's --help said only "1/2 a step failed".
func TestCronExitCodesSayBadInputGoesOn(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(string(b)), " ")
	_, cron, _ := strings.Cut(flat, "## Running it from cron")
	cron, _, _ = strings.Cut(cron, "**Upgrading.**")
	for _, want := range []string{"after the tidy-up), but not a bad input file or a leftover (below);",
		"listed as rejected, and the pass goes on (exit 2)"} {
		if !strings.Contains(cron, want) {
			t.Errorf("README's cron paragraph does not say %q:\n%s", want, cron)
		}
	}
	out, err := exec.Command("bash", "../scripts/cron/crawl-pass.sh", "--help").Output()
	if err != nil {
		t.Fatal(err)
	}
	help := strings.Join(strings.Fields(string(out)), " ")
	_, exits, _ := strings.Cut(help, "Exit statuses:")
	exits, _, _ = strings.Cut(exits, "130 interrupted")
	for _, want := range []string{"and the pass stopped there", "or 2: a file it applied was bad input, set aside (above), and the pass went on"} {
		if !strings.Contains(exits, want) {
			t.Errorf("crawl-pass.sh --help's exit statuses do not say %q:\n%s", want, exits)
		}
	}
}
