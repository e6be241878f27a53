package cron

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// A bad argument stops the pass before its first step, with one line
// naming it and exit 2: no capture first (NOW, LIMIT and LOCK_WAIT were
// used only after it), and no folder made. A zero CAPTURE_DURATION is
// refused (capture --duration 0 has no limit: the pass would never end).
// A DATA_DIR whose parent folder is missing is a mistyped path, not a new
// dataset. METRICS_DIR, if set, is a folder it can write in, and
// INFOHASH runs (--version). The checks need no
// date(1) (noDate): NOW is one infohash itself refuses, whose reason the
// line gives.
func TestCrawlPassBadArguments(t *testing.T) {
	for _, tc := range []struct {
		name, data, duration, want string
		env                        []string
	}{
		{"mistyped DATA_DIR", "typo/sub/ih", "1s", "DATA_DIR", nil},
		{"DATA_DIR a file", "file", "1s", "is not a folder", nil},
		{"mistyped EXPORT_DIR", "ds", "1s", "EXPORT_DIR", []string{"EXPORT_DIR=typo/export"}},
		{"NOW not RFC 3339", "ds", "1s", `NOW=yesterday: want an RFC 3339 time such as 2026-01-02T03:04:05Z (infohash: clock: --now: "yesterday" is not an RFC 3339 time: want the year (4 digits) at "yesterday")`, []string{"NOW=yesterday"}},
		{"NOW no real day", "ds", "1s", `NOW=2026-02-30T00:00:00Z: want an RFC 3339 time such as 2026-01-02T03:04:05Z (infohash: clock: --now: "2026-02-30T00:00:00Z" is not an RFC 3339 time: day out of range)`, []string{"NOW=2026-02-30T00:00:00Z"}},
		{"NOW hour 24", "ds", "1s", `NOW=2026-01-02T24:00:00Z: want an RFC 3339 time`, []string{"NOW=2026-01-02T24:00:00Z"}},
		{"NOW no zone", "ds", "1s", `NOW=2026-01-02T03:04:05: want an RFC 3339 time such as 2026-01-02T03:04:05Z (infohash: clock: --now: "2026-01-02T03:04:05" is not an RFC 3339 time: missing the zone (Z or ±hh:mm))`, []string{"NOW=2026-01-02T03:04:05"}},
		{"bad duration", "ds", "12x", "CAPTURE_DURATION 12x", nil},
		{"zero duration", "ds", "0", "CAPTURE_DURATION 0: want more than zero", nil},
		{"zero duration with units", "ds", "0h0.0m", "CAPTURE_DURATION 0h0.0m: want more than zero", nil},
		{"bad LIMIT", "ds", "1s", "LIMIT=many", []string{"LIMIT=many"}},
		// The pass's gauges cannot be written: no more lines for that.
		{"bad LIMIT, no METRICS_DIR", "ds", "1s", "LIMIT=many", []string{"LIMIT=many", "METRICS_DIR=no-metrics"}},
		{"bad PASS_BUDGET", "ds", "1s", "PASS_BUDGET=1.5h: want more than zero", []string{"PASS_BUDGET=1.5h"}},
		{"zero KEEP", "ds", "1s", "KEEP=0: want a number of snapshots, 1 or more", []string{"KEEP=0"}},
		{"zero KEEP_PASSES", "ds", "1s", "KEEP_PASSES=0: want a number of pass folders, 1 or more", []string{"KEEP_PASSES=0"}},
		{"bad LOCK_WAIT", "ds", "1s", "LOCK_WAIT=5", []string{"LOCK_WAIT=5"}},
		{"no binary", "ds", "1s", "INFOHASH=", []string{"INFOHASH=no-such-infohash", "PATH=/usr/bin:/bin"}},
		// Found only as capture failed (exit 2), in every pass.
		{"no METRICS_DIR", "ds", "1s", "/no-metrics is not a folder this pass can write in", []string{"METRICS_DIR=no-metrics"}},
		{"METRICS_DIR a file", "ds", "1s", "/file is not a folder this pass can write in", []string{"METRICS_DIR=file"}},
		// Another system's build, a broken wrapper: a step failed each pass.
		{"binary does not run", "ds", "1s", "does not run: `", []string{"INFOHASH=broken"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			for i, e := range tc.env {
				if k, v, _ := strings.Cut(e, "="); k == "EXPORT_DIR" || k == "METRICS_DIR" {
					tc.env[i] = k + "=" + filepath.Join(dir, v)
				} else if e == "INFOHASH=broken" {
					tc.env[i] = "INFOHASH=" + script(t, "infohash", "echo 'infohash: cannot execute binary file: Exec format error' >&2; exit 126")
				}
			}
			env := append([]string{noDate(t)}, tc.env...) // "no binary" sets its own PATH
			log := runPass(t, filepath.Join(dir, tc.data), "c1", tc.duration, 2, env...)
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
	if !applied(t, data, filepath.Join(data, "work", "c1", "observations.arrows")) {
		t.Errorf("the first pass applied no observations; log:\n%s", log)
	}
}

// A good NOW passes the checks without date(1) (noDate), and the stages
// that take a --now get NOW (an offset and a fraction read as they are)
// plus the time elapsed since the pass began. NOW is a month back from the
// wall clock, whatever its year: a fixed date would be refused as more
// than 10 years away once the wall clock had moved on.
func TestCrawlPassNowWithoutDate(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ds")
	now := time.Now().Add(-30 * 24 * time.Hour).Truncate(time.Second).Add(500 * time.Millisecond)
	log := runPass(t, data, "c1", "1s", 0, noDate(t), "NOW="+now.In(time.FixedZone("", 3600)).Format(time.RFC3339Nano))
	for _, stage := range []string{"capture", "dedup", "plan-retries", "fetch", "merge"} {
		m := regexp.MustCompile(`crawl-pass c1: ` + stage + `: \S+ ` + stage + ` .*--now (\S+) `).FindStringSubmatch(log)
		if m == nil {
			t.Errorf("%s ran without --now; log:\n%s", stage, log)
			continue
		}
		if got, err := time.Parse(time.RFC3339Nano, m[1]); err != nil || got.Before(now) || got.After(now.Add(time.Minute)) {
			t.Errorf("%s ran with --now %s, want NOW (%s) plus the time since the pass began; log:\n%s", stage, m[1], now.UTC().Format(time.RFC3339Nano), log)
		}
	}
	if !applied(t, data, filepath.Join(data, "work", "c1", "observations.arrows")) {
		t.Errorf("the pass applied no observations; log:\n%s", log)
	}
}

// noDate returns a PATH setting whose date(1) fails whatever it is asked,
// as BSD's and busybox's do on GNU's -d: the pass's checks must not need
// it (its log lines then lack their time, and PASS must be set).
func noDate(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "date"), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return "PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH")
}

// crontab.example keeps the disk bounded: once the day's state export is
// written, the exports older than a week go, with a killed export's
// temporary file (no later export writes that name again); a newer
// export, a live export's temporary file and the rest of the folder stay.
// Every log it appends to is under the rotation it shows.
func TestCrontabPrunesStateExports(t *testing.T) {
	b, err := os.ReadFile("crontab.example")
	if err != nil {
		t.Fatal(err)
	}
	var prune string
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "#") && strings.Contains(line, "--table state") {
			_, prune, _ = strings.Cut(line, " && ")
		}
		for _, m := range regexp.MustCompile(`>>(/var/log/infohash/\S+)`).FindAllStringSubmatch(line, -1) {
			if ok, _ := filepath.Match("/var/log/infohash/*.log", m[1]); !ok || !strings.Contains(string(b), "#   /var/log/infohash/*.log {") {
				t.Errorf("%s: not under the logrotate snippet's /var/log/infohash/*.log", m[1])
			}
		}
	}
	if !strings.HasPrefix(prune, "find ") {
		t.Fatalf("the state export's line prunes nothing after it: %q", prune)
	}
	const day = 24 * time.Hour
	dir := t.TempDir()
	export := filepath.Join(dir, "export")
	if err := os.Mkdir(export, 0o755); err != nil {
		t.Fatal(err)
	}
	files := []struct {
		name  string
		age   time.Duration
		stays bool
	}{
		{"state-2026-01-01.csv", 8 * day, false},
		{".tmp-state-2026-01-01.csv-L0123456789ab", 8 * day, false},
		{"state-2026-01-07.csv", 2 * day, true},
		{".tmp-state-2026-01-09.csv-L0123456789ab", time.Minute, true},
		{"catalog.parquet", 30 * day, true},
	}
	for _, f := range files {
		p := filepath.Join(export, f.name)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-f.age)
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("sh", "-c", strings.ReplaceAll(prune, "/srv/ih", dir)).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", prune, err, out)
	}
	for _, f := range files {
		if kept := exists(filepath.Join(export, f.name)); kept != f.stays {
			t.Errorf("%s (%v old): kept %v, want %v", f.name, f.age, kept, f.stays)
		}
	}
}

// A DATA_DIR inside a dataset (state/current, a snapshot, a new folder in
// one) is refused before any step, with one line naming the dataset, and
// nothing is made there: the pass would write work/ and export/ into
// folders the dataset manages. The dataset's own folder is accepted.
func TestCrawlPassDataInsideDataset(t *testing.T) {
	dir := t.TempDir()
	ds := filepath.Join(dir, "ds")
	for _, d := range []string{"manifests", "state/v/000000000001/prefix=00"} {
		if err := os.MkdirAll(filepath.Join(ds, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ds, "CURRENT"), []byte("000000000001.json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("v/000000000001", filepath.Join(ds, "state", "current")); err != nil {
		t.Fatal(err)
	}
	for _, data := range []string{
		"ds/state/current",
		"ds/state/v/000000000001/prefix=00",
		"ds/state",
		"ds/newfolder",
	} {
		t.Run(data, func(t *testing.T) {
			before := tree(t, ds)
			log := runPass(t, filepath.Join(dir, data), "c1", "1s", 2, noDate(t))
			if strings.Count(log, "\n") != 1 || !strings.Contains(log, "is inside the dataset") {
				t.Errorf("log: want one line saying DATA_DIR is inside the dataset, got:\n%s", log)
			}
			if after := tree(t, ds); after != before {
				t.Errorf("a refused pass changed the dataset:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}

// tree lists every path under root, one per line.
func tree(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(p string, _ os.DirEntry, err error) error {
		b.WriteString(p + "\n")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The pass needs bash 5.0 or newer and says so first, in one line (exit
// 2: what it needs, what runs it, how to run it with a newer bash), rather
// than fail half-way under macOS's /bin/bash 3.2, RHEL 8's 4.4 or a sh. No
// old bash is at hand: the bash cases run the script sourced by this bash
// with BASH_VERSION set to the old one's, which is what the check reads
// (the script has no test switch); the sh case is a real sh that is not
// bash.
func TestCrawlPassNeedsBash5(t *testing.T) {
	const need = "crawl-pass.sh: needs bash 5.0 or newer"
	sourced := func(version string) []string {
		return []string{"bash", "-c", `BASH_VERSION='` + version + `'; . "$0" "$@"`, "./crawl-pass.sh"}
	}
	for _, tc := range []struct {
		name string
		cmd  []string
		want string // "": the check passes (the usage line follows)
	}{
		{"bash 3.2, as macOS has", sourced("3.2.57(1)-release"), "this is bash 3.2.57(1)-release: run it with a newer bash"},
		{"bash 4.4, as RHEL 8 has", sourced("4.4.20(1)-release"), "this is bash 4.4.20(1)-release: run it with a newer bash"},
		{"sh", []string{"sh", "./crawl-pass.sh"}, "this is not bash: run it with a newer bash"},
		{"bash 5.0", sourced("5.0.0(1)-release"), ""},
		{"this bash", []string{"./crawl-pass.sh"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.cmd[0] == "sh" {
				if out, _ := exec.Command("sh", "-c", "echo ${BASH_VERSION:-}").Output(); strings.TrimSpace(string(out)) != "" {
					t.Skipf("sh is bash %s here", strings.TrimSpace(string(out)))
				}
			}
			data := filepath.Join(t.TempDir(), "ds")
			args := append(tc.cmd[1:], data, "1s", "extra") // one argument too many: a usage error once past the check
			cmd := exec.Command(tc.cmd[0], args...)
			cmd.Env = append(os.Environ(), "INFOHASH="+bin)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 {
				t.Fatalf("exit %v, want 2; output:\n%s", err, out)
			}
			log := string(out)
			switch {
			case strings.Count(log, "\n") != 1:
				t.Errorf("want one line, got:\n%s", log)
			case tc.want == "" && (strings.Contains(log, need) || !strings.Contains(log, "usage: crawl-pass.sh")):
				t.Errorf("want the check passed and the usage line, got:\n%s", log)
			case tc.want != "" && (!strings.HasPrefix(log, need) || !strings.Contains(log, tc.want) || !strings.Contains(log, "/bin/bash ./crawl-pass.sh DATA_DIR")):
				t.Errorf("want %q ... %q and how to run it, got:\n%s", need, tc.want, log)
			}
			if exists(data) {
				t.Errorf("a refused pass made %s", data)
			}
		})
	}
}
