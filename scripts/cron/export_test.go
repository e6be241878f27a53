package cron

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// EXPORT_EVERY spares the passes between exports the catalog export's
// cost (it reads the whole state): a pass that began less than that after
// the last pass that exported began skips it, says so, and leaves
// catalog.parquet and infohash_export.prom as they were, exiting 0. A
// pass exports once the last export is old enough (its record set back
// here, rather than the test waiting an hour), or catalog.parquet is
// gone; unset, every pass exports, as before; never, none does.
func TestCrawlPassExportEvery(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ds")
	metrics := t.TempDir()
	catalog := filepath.Join(data, "export", "catalog.parquet")
	record := filepath.Join(data, "work", "export.last")
	prom := filepath.Join(metrics, "infohash_export.prom")
	exported := "export: " + bin + " export --data " + data
	type seen struct {
		catalog os.FileInfo
		prom    []byte
	}
	look := func(t *testing.T) seen {
		t.Helper()
		fi, err := os.Stat(catalog)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(prom)
		if err != nil {
			t.Fatal(err)
		}
		return seen{fi, b}
	}
	// setAgo records the last export as made by pass x0, minutes whole
	// minutes of the wall clock ago: the pass that starts next (within
	// seconds, and so that minute or the next) finds it that old, or a
	// minute older.
	setAgo := func(minutes int64) func(t *testing.T) {
		return func(t *testing.T) {
			t.Helper()
			sec := (time.Now().Unix()/60 - minutes) * 60
			if err := os.WriteFile(record, fmt.Appendf(nil, "%d x0\n", sec), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, tc := range []struct {
		name   string
		every  string // EXPORT_EVERY; "-" unset
		before func(t *testing.T)
		export bool   // the pass exports
		skip   string // else its log says so, with this
	}{
		{"first pass", "1h", nil, true, ""},
		{"just exported", "1h", nil, false, "export: skipped (pass x1 exported "},
		{"58 minutes ago", "1h", setAgo(58), false, "export: skipped (pass x0 exported 5"}, // 58 or 59
		{"an hour ago", "1h", setAgo(60), true, ""},
		{"catalog gone", "1h", func(t *testing.T) { os.Remove(catalog) }, true, ""},
		{"unset", "-", nil, true, ""},
		{"never", "never", nil, false, "export: skipped (EXPORT_EVERY=never)"},
	} {
		pass := fmt.Sprintf("x%d", i+1)
		var was seen
		if i > 0 {
			was = look(t)
		}
		if tc.before != nil {
			tc.before(t)
		}
		if !exists(catalog) {
			// Removed: the new file may reuse its inode, which
			// os.SameFile then takes for the old one.
			was.catalog = nil
		}
		env := []string{"METRICS_DIR=" + metrics}
		if tc.every != "-" {
			env = append(env, "EXPORT_EVERY="+tc.every)
		}
		log := runPass(t, data, pass, "1s", 0, env...)
		now := look(t)
		if tc.export {
			if !strings.Contains(log, exported) || strings.Contains(log, "export: skipped") {
				t.Fatalf("%s: pass %s did not export; log:\n%s", tc.name, pass, log)
			}
			if was.catalog != nil && os.SameFile(was.catalog, now.catalog) {
				t.Fatalf("%s: pass %s left the old catalog.parquet", tc.name, pass)
			}
			if b, err := os.ReadFile(record); tc.every != "-" && (err != nil || !strings.HasSuffix(string(b), " "+pass+"\n")) {
				t.Fatalf("%s: %s holds %q (%v), want pass %s's export", tc.name, record, b, err, pass)
			}
			continue
		}
		if strings.Contains(log, exported) || !strings.Contains(log, tc.skip) {
			t.Fatalf("%s: pass %s exported, or did not say %q; log:\n%s", tc.name, pass, tc.skip, log)
		}
		if !os.SameFile(was.catalog, now.catalog) || !was.catalog.ModTime().Equal(now.catalog.ModTime()) || !bytes.Equal(was.prom, now.prom) {
			t.Fatalf("%s: pass %s skipped the export but changed catalog.parquet or infohash_export.prom", tc.name, pass)
		}
		if got := gauge(t, filepath.Join(metrics, "infohash_crawl_pass.prom"), "infohash_crawl_pass_exit_status"); got != "0" {
			t.Fatalf("%s: the pass's exit_status gauge %q, want 0", tc.name, got)
		}
	}
}

// A bad EXPORT_EVERY is refused before any step, with one line naming it
// and exit 2, and nothing made: seconds (passes start on minutes), zero,
// fractions, words but never.
func TestCrawlPassExportEveryBad(t *testing.T) {
	for _, every := range []string{"30s", "0m", "0", "1.5h", "often", "1h-"} {
		t.Run(every, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ds")
			log := runPass(t, data, "b1", "1s", 2, "EXPORT_EVERY="+every)
			if want := "EXPORT_EVERY=" + every + ": want more than zero in whole days, hours and minutes"; strings.Count(log, "\n") != 1 || !strings.Contains(log, want) {
				t.Fatalf("log %q, want one line saying %q", log, want)
			}
			if exists(data) {
				t.Fatalf("%s made", data)
			}
		})
	}
}
