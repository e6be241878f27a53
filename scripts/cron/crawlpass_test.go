package cron

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
)

// A pass first applies what earlier passes left: their observations and
// fetch results, which dedup and merge had not committed, before the 10-
// newest rule prunes their folders.
func TestCrawlPassAppliesLeftovers(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ds")
	seed := filepath.Join(t.TempDir(), "seed.txt")
	hexList(t, seed, hashes(1, 3)...)
	ih(t, "dedup", "--data", data, seed)
	// Pass p0 fetched, and stopped before dedup and merge.
	p0 := filepath.Join(data, "work", "p0")
	obsParquet(t, filepath.Join(p0, "observations.parquet"), hashes(100, 3)...)
	ih(t, "plan-retries", "--data", data, "-o", filepath.Join(p0, "jobs.parquet"))
	ih(t, "fetch", "--bootstrap", "", "--timeout", "1s", "--deadline", "2s",
		filepath.Join(p0, "jobs.parquet"), "-o", filepath.Join(p0, "results.parquet"))
	// Eleven later passes with nothing left to apply.
	for i := 1; i <= 11; i++ {
		q := filepath.Join(data, "work", fmt.Sprintf("q%02d", i))
		if err := os.MkdirAll(q, 0o755); err != nil {
			t.Fatal(err)
		}
	}

	log := runPass(t, data, "z1", "1s", 0)

	for _, f := range []string{"observations.parquet", "results.parquet"} {
		if !applied(t, data, filepath.Join(p0, f)) {
			t.Errorf("p0's %s is not in the ledger; log:\n%s", f, log)
		}
	}
	if !known(t, data, hashes(100, 3)...) {
		t.Errorf("p0's hashes are not in the state")
	}
	ents, err := os.ReadDir(filepath.Join(data, "work"))
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") { // .pass.lock
			left = append(left, e.Name())
		}
	}
	if got, want := strings.Join(left, " "), "q03 q04 q05 q06 q07 q08 q09 q10 q11 z1"; got != want {
		t.Errorf("pass folders left: %s, want %s", got, want)
	}
}

// The auditor's case: capture gets SIGTERM, commits what it had and exits
// 130, and the pass stops there. A signal to the script alone (kill PID,
// Ctrl-C) or to the whole pass (as systemd stops a unit) is passed on to
// capture, which commits, and the script waits for it, logs one
// "interrupted" line and exits 130: no capture is left running as an
// orphan. The next pass applies the observations.
func TestCrawlPassAfterSIGTERMInCapture(t *testing.T) {
	for _, tc := range []struct {
		name   string
		target string // capture, script or group
		sig    syscall.Signal
	}{
		{"capture", "capture", syscall.SIGTERM},
		{"script", "script", syscall.SIGTERM},
		{"script SIGINT", "script", syscall.SIGINT},
		{"whole pass", "group", syscall.SIGTERM},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ds")
			p := startPass(t, data, "a1", "60s")
			addr := p.log.waitFor(t, regexp.MustCompile(`capture: listening.* addr=(\S+)`))
			seen := getPeers(t, addr)
			capture := child(t, p.cmd.Process.Pid)
			pid := map[string]int{"capture": capture, "script": p.cmd.Process.Pid, "group": -p.cmd.Process.Pid}[tc.target]
			if err := syscall.Kill(pid, tc.sig); err != nil {
				t.Fatal(err)
			}
			if got := p.wait(t); got != 130 {
				t.Fatalf("pass a1: exit %d, want 130; log:\n%s", got, p.log)
			}
			if err := syscall.Kill(capture, 0); err == nil {
				t.Fatalf("capture (PID %d) still runs after the pass ended; log:\n%s", capture, p.log)
			}
			if n := strings.Count(p.log.String(), "crawl-pass a1: capture: interrupted (exit 130)"); n != 1 {
				t.Errorf("%d \"capture: interrupted\" lines in the log, want 1:\n%s", n, p.log)
			}
			obs := filepath.Join(data, "work", "a1", "observations.arrows")
			if !exists(obs) || exists(obs+".applied") {
				t.Fatalf("a1 left no unapplied observations; log:\n%s", p.log)
			}

			// a2's capture has one saved contact, the socket getPeers
			// queried it from, bound but silent: it hears no DHT message
			// all run, and ends partial (exit 3), as in an outage.
			log := runPass(t, data, "a2", "1s", 3)
			if !strings.Contains(log, "crawl-pass a2: capture: partial (exit 3)") {
				t.Errorf("a2's capture did not end partial; log:\n%s", log)
			}
			if !applied(t, data, obs) || !known(t, data, seen) {
				t.Errorf("a1's observations (%s) were not applied; log:\n%s", seen, log)
			}
			if !exists(obs + ".applied") {
				t.Errorf("a1's observations are not marked applied")
			}
		})
	}
}

// A dedup that finds the dataset locked (exit 75) leaves the pass's
// observations for the next pass.
func TestCrawlPassLockedDedup(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ds")
	seed := filepath.Join(t.TempDir(), "seed.txt")
	hexList(t, seed, hashes(1, 1)...)
	ih(t, "dedup", "--data", data, seed)

	p := startPass(t, data, "b1", "2s")
	p.log.waitFor(t, regexp.MustCompile(`(capture: listening)`))
	lock, err := dataset.LockWriter(context.Background(), data, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := p.wait(t)
	lock.Release()
	if got != 75 {
		t.Fatalf("pass b1: exit %d, want 75; log:\n%s", got, p.log)
	}
	obs := filepath.Join(data, "work", "b1", "observations.arrows")
	if !exists(obs) || exists(obs+".applied") || applied(t, data, obs) {
		t.Fatalf("b1's observations: want them left unapplied; log:\n%s", p.log)
	}

	log := runPass(t, data, "b2", "1s", 0)
	if !applied(t, data, obs) {
		t.Errorf("b1's observations were not applied; log:\n%s", log)
	}
}

// A leftover that is bad input is set aside where status lists it, once:
// it does not stop every later pass. A usage error sets nothing aside.
func TestCrawlPassBadLeftover(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ds")
	obs := filepath.Join(data, "work", "p0", "observations.parquet")
	res := filepath.Join(data, "work", "p1", "results.parquet")
	hexList(t, obs, "not a hash")
	hexList(t, res, "not results")

	log := runPass(t, data, "z0", "1s", 2, "NOW=yesterday")
	if !exists(obs) {
		t.Fatalf("a usage error set p0's observations aside; log:\n%s", log)
	}

	log = runPass(t, data, "z1", "1s", 2)
	keptObs := filepath.Join(data, "inbox", "crawl-pass-p0-observations.parquet.bad")
	keptRes := filepath.Join(data, "inbox", "merge", "crawl-pass-p1-results.parquet.bad")
	for _, f := range []string{keptObs, keptRes} {
		if !exists(f) {
			t.Errorf("%s: not set aside; log:\n%s", f, log)
		}
	}
	if exists(obs) || exists(res) {
		t.Errorf("a bad input is still where the next pass would apply it again")
	}
	if !applied(t, data, filepath.Join(data, "work", "z1", "observations.arrows")) {
		t.Errorf("z1 did not go on with its own capture; log:\n%s", log)
	}
	status := ih(t, "status", "--data", data)
	for _, f := range []string{keptObs, keptRes} {
		if !strings.Contains(status, f) {
			t.Errorf("status does not list %s:\n%s", f, status)
		}
	}

	runPass(t, data, "z2", "1s", 0)
}

// Fetch results left in a DATA_DIR that holds no dataset (a new one whose
// first dedup committed nothing, and so removed the dataset it made) wait
// for the pass's own dedup to make one, then are merged: merge makes no
// dataset, and run first it failed on the folder (exit 2) and stopped the
// pass before its capture, pass after pass.
func TestCrawlPassResultsWaitForDataset(t *testing.T) {
	// Results of a fetch of a hash list: unleased, as a manual fetch's
	// (a jobs file planned on another dataset gives results merge refuses).
	jobs := filepath.Join(t.TempDir(), "hashes.txt")
	hexList(t, jobs, hashes(1, 3)...)
	data := filepath.Join(t.TempDir(), "ds")
	res := filepath.Join(data, "work", "p1", "results.parquet")
	if err := os.MkdirAll(filepath.Dir(res), 0o755); err != nil {
		t.Fatal(err)
	}
	ih(t, "fetch", "--bootstrap", "", "--timeout", "1s", "--deadline", "2s", jobs, "-o", res)

	log := runPass(t, data, "z1", "1s", 0)
	if !applied(t, data, res) || !exists(res+".applied") {
		t.Errorf("p1's results were not merged once the pass's dedup made the dataset; log:\n%s", log)
	}
	if !applied(t, data, filepath.Join(data, "work", "z1", "observations.arrows")) {
		t.Errorf("z1 did not go on with its own capture; log:\n%s", log)
	}
	wait, merged := strings.Index(log, "holds no dataset yet"), strings.Index(log, "now that "+data+" holds a dataset")
	if wait < 0 || merged < wait {
		t.Errorf("the log does not say that p1's results waited for the dataset, then were merged:\n%s", log)
	}
}

// A file left by an earlier pass that keeps failing with exit 1 (an I/O
// error, say) no longer stops every later pass before capture: it stays
// for the next pass, the pass goes on with its own work and ends partial
// (exit 3), and once the failure is gone a pass applies it.
func TestCrawlPassFailingLeftover(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ds")
	obs := filepath.Join(data, "work", "p0", "observations.parquet")
	obsParquet(t, obs, hashes(200, 2)...)
	// An infohash whose dedup fails on p0's file, as on a read error.
	wrapper := filepath.Join(t.TempDir(), "infohash")
	script := "#!/bin/sh\ncase \"$1 $*\" in\n\"dedup \"*" + obs + "*) echo \"infohash: dedup: " + obs +
		": read: input/output error\" >&2; exit 1 ;;\nesac\nexec " + bin + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}

	log := runPass(t, data, "z1", "1s", 3, "INFOHASH="+wrapper)
	if !strings.Contains(log, "left for the next pass; going on") {
		t.Errorf("the log does not say p0's file is left for the next pass:\n%s", log)
	}
	if !applied(t, data, filepath.Join(data, "work", "z1", "observations.arrows")) {
		t.Errorf("z1 did not go on with its own capture; log:\n%s", log)
	}
	if applied(t, data, obs) || !exists(obs) || exists(obs+".applied") {
		t.Fatalf("p0's file was marked applied or moved although dedup failed on it")
	}

	log = runPass(t, data, "z2", "1s", 0)
	if !applied(t, data, obs) || !known(t, data, hashes(200, 2)...) {
		t.Errorf("p0's observations were not applied once dedup could read them; log:\n%s", log)
	}
}

// getPeers asks capture's node at addr for the peers of a hash, as a
// DHT node would, until it answers, and returns the hash (hex).
func getPeers(t *testing.T, addr string) string {
	t.Helper()
	hash := strings.Repeat("\x5a", 20)
	msg := "d1:ad2:id20:" + strings.Repeat("\x01", 20) + "9:info_hash20:" + hash + "e1:q9:get_peers1:t2:aa1:y1:qe"
	c, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	// The socket stays bound, answering nothing, until the test ends: the
	// capture saves it as a contact, and a later pass that expects no DHT
	// message from it (an outage) heard one when another test's DHT node
	// bound the freed port meanwhile (CI runs packages side by side).
	t.Cleanup(func() { c.Close() })
	buf := make([]byte, 2048)
	// A minute bounds a capture that never answers; 20 tries of 500 ms
	// were a 10 s window for one that answers slowly on a loaded machine.
	for end := time.Now().Add(time.Minute); time.Now().Before(end); {
		if _, err := c.Write([]byte(msg)); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		if _, err := c.Read(buf); err == nil {
			return fmt.Sprintf("%x", hash)
		}
	}
	t.Fatalf("capture at %s did not answer get_peers", addr)
	return ""
}

// child returns the PID of the infohash process whose parent is pid.
func child(t *testing.T, pid int) int {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		stats, _ := filepath.Glob("/proc/[0-9]*/stat")
		for _, s := range stats {
			b, err := os.ReadFile(s)
			if err != nil {
				continue
			}
			st := string(b)
			f := strings.Fields(st[strings.LastIndexByte(st, ')')+1:])
			if strings.Contains(st, "(infohash)") && len(f) > 1 && f[1] == strconv.Itoa(pid) {
				n, _ := strconv.Atoi(filepath.Base(filepath.Dir(s)))
				return n
			}
		}
	}
	t.Fatalf("process %d has no child", pid)
	return 0
}

// A step killed by a signal that the pass did not pass on (kill -9, the
// OOM killer) is a failed step: the pass logs which signal and exits 1,
// one of its documented statuses, not the shell's 137. What the killed
// step left the next pass takes up.
func TestCrawlPassStepKilled(t *testing.T) {
	for _, stage := range []string{"capture", "dedup", "export"} {
		t.Run(stage, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ds")
			// An infohash whose STAGE dies of SIGKILL as it starts.
			wrapper := filepath.Join(t.TempDir(), "infohash")
			script := "#!/bin/sh\n[ \"$1\" = " + stage + " ] && kill -KILL $$\nexec " + bin + " \"$@\"\n"
			if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			log := runPass(t, data, "k1", "1s", 1, "INFOHASH="+wrapper)
			if !strings.Contains(log, stage+": killed by SIGKILL (status 137): a failure (exit 1)") {
				t.Errorf("the log does not say %s was killed:\n%s", stage, log)
			}
			runPass(t, data, "k2", "1s", 0)
		})
	}
}

// A pass killed while plan-retries publishes its jobs leaves no lease
// stranded: the next pass frees or fetches every job it leased. Killed
// between plan-retries' commit and its rename (SIGKILL injected by
// strace(1) as plan-retries renames its jobs file into place), the jobs
// stay under a temporary name beside the plan's output, which crawl-pass
// keeps from pass to pass so that the next plan-retries finds them and
// drops their leases. Killed between that rename and the pass's move of
// the file into its folder (a mv that kills the script), the jobs file
// waits at that path, and the next pass fetches it.
func TestCrawlPassPlanKilled(t *testing.T) {
	for _, tc := range []struct {
		name string
		want int // pass p1's exit status
		// env returns the settings that kill pass p1 at the moment.
		env func(t *testing.T, data string) []string
		// check checks how pass p2 took up p1's jobs.
		check func(t *testing.T, p2, log string)
	}{
		{"between commit and rename", 1, func(t *testing.T, data string) []string {
			if out, err := exec.Command("strace", "-f", "-qq", "-o", "/dev/null", "true").CombinedOutput(); err != nil {
				t.Skipf("no working strace(1) to kill plan-retries at its rename: %v %s", err, out)
			}
			return []string{"INFOHASH=" + script(t, "infohash", `out=
for a; do [ "${prev:-}" = -o ] && out=$a; prev=$a; done
[ "$1" = plan-retries ] && [ -n "$out" ] && exec strace -f -qq -o /dev/null -P "$out" \
	-e trace='?rename,renameat,renameat2' -e inject='?rename,renameat,renameat2:signal=KILL' `+bin+` "$@"
exec `+bin+` "$@"`)}
		}, func(t *testing.T, p2, log string) {
			if n := statsJSON(t, filepath.Join(p2, "plan.json"))["unpublished_leases_ended"]; n != 5 {
				t.Errorf("p2's plan dropped %v leases of p1's unpublished jobs, want 5; log:\n%s", n, log)
			}
		}},
		{"between rename and move", 137, func(t *testing.T, data string) []string {
			mv, err := exec.LookPath("mv")
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Dir(script(t, "mv", `for a; do [ "$a" = "`+filepath.Join(data, "work", "jobs.parquet")+`" ] && kill -KILL $PPID && exit 1; done
exec `+mv+` "$@"`))
			return []string{"PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH")}
		}, func(t *testing.T, p2, log string) {
			if exists(filepath.Join(p2, "plan.json")) || !strings.Contains(log, "fetching it in this pass in place of a new plan") {
				t.Errorf("p2 did not fetch p1's jobs file in place of a plan; log:\n%s", log)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ds")
			seed := filepath.Join(t.TempDir(), "seed.txt")
			hexList(t, seed, hashes(1, 20)...)
			ih(t, "dedup", "--data", data, seed)

			log := runPass(t, data, "p1", "1s", tc.want, append(tc.env(t, data), "LIMIT=5")...)
			if n := len(liveLeases(t, data)); n != 5 {
				t.Fatalf("setup: %d live leases after the killed pass, want its 5; log:\n%s", n, log)
			}

			log = runPass(t, data, "p2", "1s", 0, "LIMIT=5")
			if live := liveLeases(t, data); len(live) > 0 {
				t.Errorf("leases stranded after the next pass: %v; log:\n%s", live, log)
			}
			if exists(filepath.Join(data, "work", "jobs.parquet")) {
				t.Errorf("a jobs file is left at the plan's path; log:\n%s", log)
			}
			p2 := filepath.Join(data, "work", "p2")
			tc.check(t, p2, log)
			fetch := statsJSON(t, filepath.Join(p2, "fetch.json"))
			if fetch["attempted"] != 5 {
				t.Errorf("p2 attempted %v jobs, want 5; log:\n%s", fetch["attempted"], log)
			}
		})
	}
}
