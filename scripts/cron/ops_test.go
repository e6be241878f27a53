package cron

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

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

// A jobs file that fetch found DATA_DIR/dht-state locked for goes back for
// the next pass only if it is worth fetching: a plan with no job is not
// put back (the next pass fetched it in place of a plan: nothing, while
// hashes were due), and one whose leases have all ended by the next
// pass's clock (it came after the lease: cron paused) is dropped, and
// that pass plans afresh, its plan-retries planning those hashes again
// (fetched in place, it attempted nothing). A plan with no job is not even
// locked out: fetch ends at once without its DHT state (exit 0).
func TestCrawlPassPutBackJobs(t *testing.T) {
	// Pass l1 runs 3 hours back: its leases (2 hours) have ended by l2.
	seen, l1 := time.Now().UTC().Add(-4*time.Hour).Format(time.RFC3339), time.Now().UTC().Add(-3*time.Hour).Format(time.RFC3339)
	for _, tc := range []struct {
		name string
		env  []string // pass l1's settings, with fetch locked out
		rc   int      // pass l1's exit status
		log  string   // what pass l2's log says
	}{
		{"empty plan", []string{"LIMIT=0"}, 0, ""},
		{"leases ended", []string{"LIMIT=5", "NOW=" + l1}, 75, "holds only leases that ended at "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ds")
			seed := filepath.Join(t.TempDir(), "seed.txt")
			hexList(t, seed, hashes(1, 20)...)
			ih(t, "dedup", "--data", data, "--now", seen, seed)
			release, err := dhtstate.Lock(filepath.Join(data, "dht-state"), "fetch.lock", "fetch")
			if err != nil {
				t.Fatal(err)
			}
			log := runPass(t, data, "l1", "1s", tc.rc, tc.env...)
			release()
			jobs := filepath.Join(data, "work", "jobs.parquet")
			if exists(jobs) != (tc.log != "") {
				t.Fatalf("jobs file at %s: %v, want %v; log:\n%s", jobs, exists(jobs), tc.log != "", log)
			}

			log = runPass(t, data, "l2", "1s", 0, "LIMIT=5")
			l2 := filepath.Join(data, "work", "l2")
			if !exists(filepath.Join(l2, "plan.json")) || strings.Contains(log, "in place of a new plan") {
				t.Errorf("l2 did not plan afresh; log:\n%s", log)
			}
			if !strings.Contains(log, tc.log) {
				t.Errorf("l2's log does not say %q:\n%s", tc.log, log)
			}
			if n := statsJSON(t, filepath.Join(l2, "fetch.json"))["attempted"]; n != 5 {
				t.Errorf("l2 attempted %v jobs, want 5; log:\n%s", n, log)
			}
			if exists(jobs) || exists(jobs+".lease_until") {
				t.Errorf("a jobs file is left at %s; log:\n%s", jobs, log)
			}
		})
	}
}

// KEEP is the --keep of the steps that commit (dedup, plan-retries,
// merge): status's frozen: snapshot, which README recommends for long
// reads, outlasts the passes after it (with the default 3 it went after
// about one pass).
func TestCrawlPassKeep(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ds")
	seed := filepath.Join(t.TempDir(), "seed.txt")
	hexList(t, seed, hashes(1, 20)...)
	ih(t, "dedup", "--data", data, seed)
	runPass(t, data, "k1", "1s", 0, "LIMIT=5", "KEEP=8")
	m := regexp.MustCompile(`frozen: read_parquet\('(.*)/prefix=`).FindStringSubmatch(ih(t, "status", "--data", data))
	if m == nil {
		t.Fatalf("status prints no frozen: snapshot")
	}
	for _, p := range []string{"k2", "k3"} {
		log := runPass(t, data, p, "1s", 0, "LIMIT=5", "KEEP=8")
		if !strings.Contains(log, " --keep 8 ") {
			t.Errorf("pass %s gave no step --keep 8; log:\n%s", p, log)
		}
	}
	if !exists(m[1]) {
		t.Errorf("the frozen: snapshot %s after k1 is gone two passes later, with KEEP=8", m[1])
	}
}

// A DATA_DIR the pass cannot make its folders in (here DATA_DIR/work is a
// file; a read-only disk or permissions likewise), or whose
// work/.pass.lock it cannot open, is an operational failure, exit 1, not a
// usage error (2); nothing runs, and the log has one line, saying why
// (mkdir's or bash's own line went before it).
func TestCrawlPassUnwritableData(t *testing.T) {
	for _, tt := range []struct {
		name, block string   // block: made a file, or (ending in /) a folder
		want        []string // in the line, in order (mkdir's words differ on the BSDs)
	}{
		{"work is a file", "work", []string{"cannot create WORK/w1 or DATA/export (mkdir: ", "WORK", "File exists): failed (exit 1)"}},
		{"the pass lock is a folder", "work/.pass.lock/", []string{"cannot open WORK/.pass.lock (Is a directory): failed (exit 1)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ds")
			p := filepath.Join(data, strings.TrimSuffix(tt.block, "/"))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			var err error
			if strings.HasSuffix(tt.block, "/") {
				err = os.Mkdir(p, 0o755)
			} else {
				err = os.WriteFile(p, nil, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
			log := runPass(t, data, "w1", "1s", 1)
			want := strings.NewReplacer("WORK", filepath.Join(data, "work"), "DATA", data).Replace(strings.Join(tt.want, "\x00"))
			lines := strings.Split(strings.TrimSuffix(log, "\n"), "\n")
			rest, ok := lines[0], len(lines) == 1
			for i, part := range strings.Split(want, "\x00") {
				if i == 0 {
					part = "crawl-pass w1: " + part
				}
				if at := strings.Index(rest, part); at >= 0 {
					rest = rest[at+len(part):]
				} else {
					ok = false
				}
			}
			if !ok {
				t.Errorf("the log is not one line saying %q:\n%s", strings.Split(want, "\x00"), log)
			}
		})
	}
}

// PASS_BUDGET gives fetch a --deadline of what is left of it, so that a
// pass of slow jobs ends within its cron slot: at least 1s (--deadline 0
// is none), and none over one FETCH_ARGS gives.
func TestCrawlPassBudget(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ds")
	seed := filepath.Join(t.TempDir(), "seed.txt")
	hexList(t, seed, hashes(1, 20)...)
	ih(t, "dedup", "--data", data, seed)
	deadline := regexp.MustCompile(`crawl-pass \S+: fetch: \S+ fetch .* --deadline (\S+) `)
	for _, tc := range []struct {
		name, budget, fetchArgs string
		want                    func(d time.Duration) bool
	}{
		{"left of the budget", "1m", "--timeout 1s", func(d time.Duration) bool { return d > 30*time.Second && d < time.Minute }},
		{"spent", "1s", "--timeout 1s", func(d time.Duration) bool { return d == time.Second }},
		{"FETCH_ARGS'", "1m", "--timeout 1s --deadline 2s", func(d time.Duration) bool { return d == 2*time.Second }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startPass(t, data, "b1", "2s", "LIMIT=5", "PASS_BUDGET="+tc.budget, "FETCH_ARGS="+tc.fetchArgs)
			// A fetch its deadline stopped ends partial.
			if got := p.wait(t); got != 0 && got != 3 {
				t.Fatalf("pass b1: exit %d, want 0 or 3; log:\n%s", got, p.log)
			}
			log := p.log.String()
			m := deadline.FindAllStringSubmatch(log, -1)
			if len(m) != 1 {
				t.Fatalf("%d fetch --deadline in the log, want 1:\n%s", len(m), log)
			}
			if d, err := time.ParseDuration(m[0][1]); err != nil || !tc.want(d) {
				t.Errorf("fetch --deadline %s with PASS_BUDGET=%s, FETCH_ARGS=%q; log:\n%s", m[0][1], tc.budget, tc.fetchArgs, log)
			}
		})
	}
}
