package cron

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCrawlPassIdle: a pass with nothing to fetch (the first pass leased
// every hash, and their failures are not due yet) starts no DHT node in
// fetch (its state file is left as it was) and commits no snapshot in
// merge (each would push a reader's out of the --keep window); its empty
// results are marked applied, so status lists no unapplied work.
func TestCrawlPassIdle(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ds")
	seed := filepath.Join(t.TempDir(), "seed.txt")
	hexList(t, seed, hashes(1, 5)...)
	ih(t, "dedup", "--data", data, seed)
	runPass(t, data, "i1", "1s", 0, "LIMIT=5")
	current := func() string {
		b, err := os.ReadFile(filepath.Join(data, "CURRENT"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	state := filepath.Join(data, "dht-state", "fetch-dht.json")
	fi, err := os.Stat(state)
	if err != nil {
		t.Fatalf("the first pass's fetch saved no DHT state: %v", err)
	}
	before := current()
	log := runPass(t, data, "i2", "1s", 0, "LIMIT=5")
	if st := statsJSON(t, filepath.Join(data, "work", "i2", "plan.json")); st["planned"] != 0 {
		t.Fatalf("the second pass planned %v jobs, want 0", st["planned"])
	}
	if got := current(); got != before {
		t.Errorf("CURRENT %q after the idle pass, was %q; log:\n%s", got, before, log)
	}
	if now, err := os.Stat(state); err != nil || !now.ModTime().Equal(fi.ModTime()) {
		t.Errorf("the idle fetch rewrote its DHT state (%v)", err)
	}
	if !exists(filepath.Join(data, "work", "i2", "results.arrows.applied")) {
		t.Errorf("the idle pass's results are not marked applied")
	}
	if out := ih(t, "status", "--data", data); strings.Contains(out, "unapplied") {
		t.Errorf("status lists unapplied work:\n%s", out)
	}
}
