package cron

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/internal/dhtstate"
)

// A capture or fetch refused by its lock in DATA_DIR/dht-state (another
// capture or fetch runs on it) stops the pass with exit 75, and the log
// names that lock, not the dataset's, which no step of the pass held. A
// fetch refused so has read no job: the pass puts its jobs file back where
// the next pass fetches it in place of a new plan, so no lease is left to
// run out unfetched.
func TestCrawlPassStepLockHeld(t *testing.T) {
	for _, tc := range []struct {
		step, lock string // the step, and its lock file in DATA_DIR/dht-state
		leased     int    // live leases after the stopped pass
	}{
		{"capture", "lock", 0},
		{"fetch", "fetch.lock", 5},
	} {
		t.Run(tc.step, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ds")
			seed := filepath.Join(t.TempDir(), "seed.txt")
			hexList(t, seed, hashes(1, 20)...)
			ih(t, "dedup", "--data", data, seed)
			state := filepath.Join(data, "dht-state")
			release, err := dhtstate.Lock(state, tc.lock, tc.step)
			if err != nil {
				t.Fatal(err)
			}
			log := runPass(t, data, "l1", "1s", 75, "LIMIT=5")
			release()
			want := "crawl-pass l1: " + tc.step + ": " + state + " is in use by another " + tc.step + " (exit 75)"
			if !strings.Contains(log, want) || strings.Contains(log, "dataset locked") {
				t.Errorf("the log does not name %s's lock (want %q):\n%s", tc.step, want, log)
			}
			if n := len(liveLeases(t, data)); n != tc.leased {
				t.Fatalf("%d live leases after the stopped pass, want %d; log:\n%s", n, tc.leased, log)
			}
			// A pass locked out at capture leaves no empty folder to count
			// among the 10 kept.
			if l1 := filepath.Join(data, "work", "l1"); exists(l1) != (tc.step == "fetch") {
				t.Errorf("pass folder %s: %v, want %v", l1, exists(l1), tc.step == "fetch")
			}
			jobs := filepath.Join(data, "work", "jobs.parquet")
			if exists(jobs) != (tc.leased > 0) {
				t.Fatalf("jobs file at %s: %v, want %v; log:\n%s", jobs, exists(jobs), tc.leased > 0, log)
			}

			log = runPass(t, data, "l2", "1s", 0, "LIMIT=5")
			if live := liveLeases(t, data); len(live) > 0 {
				t.Errorf("leases stranded after the next pass: %v; log:\n%s", live, log)
			}
			if tc.leased > 0 && !strings.Contains(log, "fetching it in this pass in place of a new plan") {
				t.Errorf("l2 did not fetch l1's jobs in place of a plan; log:\n%s", log)
			}
			if n := statsJSON(t, filepath.Join(data, "work", "l2", "fetch.json"))["attempted"]; n != 5 {
				t.Errorf("l2 attempted %v jobs, want 5; log:\n%s", n, log)
			}
		})
	}
}

// plan-retries waits LOCK_WAIT for another writer, as dedup and merge do:
// a manual dedup or `policy set` publishing as the pass plans (here a lock
// held for 2s) no longer stops the pass with exit 75 before fetch.
func TestCrawlPassPlanWaitsForLock(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ds")
	seed := filepath.Join(t.TempDir(), "seed.txt")
	hexList(t, seed, hashes(1, 5)...)
	ih(t, "dedup", "--data", data, seed)
	wrapper := script(t, "infohash", `case " $* " in *" plan-retries --data "*)
	flock "`+filepath.Join(data, "LOCK")+`" sleep 2 & sleep 0.5 ;; esac
exec `+bin+` "$@"`)
	log := runPass(t, data, "w1", "1s", 0, "INFOHASH="+wrapper, "LIMIT=5", "LOCK_WAIT=30s")
	if n := statsJSON(t, filepath.Join(data, "work", "w1", "fetch.json"))["attempted"]; n != 5 {
		t.Errorf("the pass attempted %v jobs, want 5; log:\n%s", n, log)
	}
}
