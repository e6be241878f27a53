package cron

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A bad argument stops the pass before its first step, with one line
// naming it and exit 2: no capture first (NOW, LIMIT and LOCK_WAIT were
// used only after it), and no folder made. A DATA_DIR whose parent folder
// is missing is a mistyped path, not a new dataset.
func TestCrawlPassBadArguments(t *testing.T) {
	for _, tc := range []struct {
		name, data, duration, want string
		env                        []string
	}{
		{"mistyped DATA_DIR", "typo/sub/ih", "1s", "DATA_DIR", nil},
		{"DATA_DIR a file", "file", "1s", "is not a folder", nil},
		{"mistyped EXPORT_DIR", "ds", "1s", "EXPORT_DIR", []string{"EXPORT_DIR=typo/export"}},
		{"NOW not RFC 3339", "ds", "1s", "NOW=yesterday", []string{"NOW=yesterday"}},
		{"NOW no real day", "ds", "1s", "NOW=", []string{"NOW=2026-02-30T00:00:00Z"}},
		{"bad duration", "ds", "12x", "CAPTURE_DURATION 12x", nil},
		{"bad LIMIT", "ds", "1s", "LIMIT=many", []string{"LIMIT=many"}},
		{"bad LOCK_WAIT", "ds", "1s", "LOCK_WAIT=5", []string{"LOCK_WAIT=5"}},
		{"no binary", "ds", "1s", "INFOHASH=", []string{"INFOHASH=no-such-infohash", "PATH=/usr/bin:/bin"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			for i, e := range tc.env {
				if k, v, _ := strings.Cut(e, "="); k == "EXPORT_DIR" {
					tc.env[i] = k + "=" + filepath.Join(dir, v)
				}
			}
			log := runPass(t, filepath.Join(dir, tc.data), "c1", tc.duration, 2, tc.env...)
			if strings.Count(log, "\n") != 1 || !strings.Contains(log, tc.want) {
				t.Errorf("log: want one line naming %q, got:\n%s", tc.want, log)
			}
			ents, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				if e.Name() != "file" {
					t.Errorf("a refused pass made %s", e.Name())
				}
			}
		})
	}
}

// A new DATA_DIR in an existing folder is a first run, not a typo.
func TestCrawlPassFirstRun(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ds")
	log := runPass(t, data, "c1", "1s", 0)
	if !applied(t, data, filepath.Join(data, "work", "c1", "observations.parquet")) {
		t.Errorf("the first pass applied no observations; log:\n%s", log)
	}
}
