package app

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestExitStatusNamesTheOutage: the exit status 3 of an outage (capture
// and fetch heard no DHT node though they asked routers or saved nodes)
// is in README's table of exit statuses and capture's paragraph, and in
// the EXIT STATUS rows for 3 of infohash --help, capture --help and fetch
// --help, so that an operator who sees a pass end 3 finds why. README
// said only "the disk of -o FILE filled up" for capture and fetch.
func TestExitStatusNamesTheOutage(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	row := regexp.MustCompile(`(?m)^\| 3 \|.*$`).FindString(readme)
	if !strings.Contains(row, "no DHT node answered the bootstrap") || !strings.Contains(row, "`--bootstrap`") {
		t.Errorf("README's exit status 3 row does not name the outage: %q", row)
	}
	flat := strings.Join(strings.Fields(readme), " ")
	if !strings.Contains(flat, "No DHT message all run, routers or saved nodes asked (an outage): exit 3, output kept.") {
		t.Errorf("README's capture paragraph does not say it exits 3 in an outage")
	}
	for _, path := range [][]string{nil, {"capture"}, {"fetch"}} {
		help := helpOf(t, path...)
		_, rows, _ := strings.Cut(help, "EXIT STATUS:")
		three := regexp.MustCompile(`(?s)\n\s+3 +(.*?)\n\s+75 `).FindStringSubmatch(rows)
		if three == nil || !strings.Contains(strings.Join(strings.Fields(three[1]), " "), "no DHT node answered the bootstrap") {
			t.Errorf("%s --help: its EXIT STATUS row 3 does not name the outage:\n%s", strings.Join(append([]string{"infohash"}, path...), " "), rows)
		}
	}
}
