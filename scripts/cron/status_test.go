package cron

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A status that fails at the end of a pass (exit 1: it cannot read the
// dataset, or --verify found damage) makes the pass exit 1, as a failed
// step does, after it has tidied up as usual; it used to exit 0, having
// checked only for a signal.
func TestCrawlPassStatusFails(t *testing.T) {
	for _, tc := range []struct {
		name, script string // script: what the wrapper does for status
		log          string
	}{
		{"exit 1", "echo 'infohash: status: cannot read the dataset' >&2; exit 1", "status: failed (exit 1): what the steps did is committed; the pass ends 1"},
		{"killed", "kill -KILL $$", "status: killed by SIGKILL (status 137): a failure (exit 1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ds")
			wrapper := filepath.Join(t.TempDir(), "infohash")
			script := "#!/bin/sh\nif [ \"$1\" = status ]; then " + tc.script + "; fi\nexec " + bin + " \"$@\"\n"
			if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			log := runPass(t, data, "s1", "1s", 1, "INFOHASH="+wrapper)
			if !strings.Contains(log, tc.log) || !strings.Contains(log, ": done (status failed)\n") {
				t.Errorf("the log does not say status failed, then done:\n%s", log)
			}
			// What the pass did is committed: the next pass goes on from it.
			log = runPass(t, data, "s2", "1s", 0)
			if strings.Contains(log, "catch-up") {
				t.Errorf("the failed status left work to catch up:\n%s", log)
			}
		})
	}
}

// An export that fails (a full or read-only export disk) no longer stops
// the pass before status and the tidy-up of work/: status still writes
// its gauges and the pass ends with the export's status (1).
func TestCrawlPassExportFails(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ds")
	metrics := t.TempDir()
	wrapper := script(t, "infohash", `if [ "$1" = export ]; then echo 'infohash: export: write catalog.parquet: no space left on device' >&2; exit 1; fi
exec `+bin+` "$@"`)
	log := runPass(t, data, "e1", "1s", 1, "INFOHASH="+wrapper, "METRICS_DIR="+metrics)
	if !strings.Contains(log, "export: failed (exit 1)") || !strings.Contains(log, ": done (export failed)\n") {
		t.Errorf("the log does not say export failed, then done:\n%s", log)
	}
	if !exists(filepath.Join(metrics, "infohash_status.prom")) {
		t.Errorf("status did not run after the failed export; log:\n%s", log)
	}
}

// A step that stops the pass still lets status write its gauges: a bad
// DIR/blocklist stops plan-retries (exit 2), and monitoring learns why
// from infohash_status_blocklist_unreadable, which a pass that stopped
// before status never wrote.
func TestCrawlPassStoppedStillWritesStatus(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ds")
	metrics := t.TempDir()
	runPass(t, data, "b0", "1s", 0, "METRICS_DIR="+metrics)
	prom := filepath.Join(metrics, "infohash_status.prom")
	if got := gauge(t, prom, "infohash_status_blocklist_unreadable"); got != "0" {
		t.Fatalf("blocklist_unreadable %q before the bad blocklist, want 0", got)
	}
	if err := os.WriteFile(filepath.Join(data, "blocklist"), []byte("garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	log := runPass(t, data, "b1", "1s", 2, "METRICS_DIR="+metrics)
	if !strings.Contains(log, "plan-retries: bad input or usage (exit 2): stopping") {
		t.Fatalf("the pass did not stop at plan-retries; log:\n%s", log)
	}
	if got := gauge(t, prom, "infohash_status_blocklist_unreadable"); got != "1" {
		t.Errorf("blocklist_unreadable %q after the pass stopped on a bad blocklist, want 1; log:\n%s", got, log)
	}
}
