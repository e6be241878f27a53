package cron

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A second pass while one runs (cron's flock -n is the crontab's, not the
// script's; a pass by hand) exits 75 at once in one line and touches
// nothing: it used to share the first one's folder in the same second,
// and its capture, locked out, removed the file the first one's capture
// wrote (exit 0, the observations lost). A pass whose name is taken gets
// a new folder, never an earlier pass's.
func TestCrawlPassOverlap(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ds")
	a := startPass(t, data, "x1", "4s")
	a.log.waitFor(t, regexp.MustCompile(`capture: listening`))
	for _, name := range []string{"x1", "x2"} {
		log := runPass(t, data, name, "1s", 75)
		if strings.Count(log, "\n") != 1 || !strings.Contains(log, "another crawl pass holds "+filepath.Join(data, "work", ".pass.lock")) {
			t.Errorf("pass %s beside x1: want one line naming the pass lock, got:\n%s", name, log)
		}
	}
	if got := a.wait(t); got != 0 {
		t.Fatalf("pass x1: exit %d, want 0; log:\n%s", got, a.log)
	}
	if obs := filepath.Join(data, "work", "x1", "observations.arrows"); !applied(t, data, obs) {
		t.Errorf("x1's observations were not applied; log:\n%s", a.log)
	}
	if exists(filepath.Join(data, "work", "x2")) {
		t.Errorf("the pass locked out made its folder")
	}
	log := runPass(t, data, "x1", "1s", 0)
	again := filepath.Join(data, "work", "x1-2")
	if !strings.Contains(log, "this pass's folder is "+again) || !exists(filepath.Join(again, "observations.arrows.applied")) {
		t.Errorf("a pass named x1 again did not get a folder of its own (%s); log:\n%s", again, log)
	}
}

// The catch-up leaves alone an empty work file whose writer still holds
// its lock (a capture or fetch of a killed pass that runs on): it used to
// mark it applied, and what the writer then wrote was never applied. The
// pass is partial (exit 3); once the writer is gone the file is applied.
func TestCrawlPassCatchUpSkipsHeldFile(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ds")
	runPass(t, data, "c0", "1s", 0)
	obs := filepath.Join(data, "work", "c00", "observations.arrows")
	if err := os.Mkdir(filepath.Dir(obs), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(obs)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	log := runPass(t, data, "c1", "1s", 3)
	if exists(obs+".applied") || !strings.Contains(log, obs+" is empty and still being written") {
		t.Fatalf("the catch-up did not leave the held file unmarked; log:\n%s", log)
	}
	f.Close() // the writer ends
	log = runPass(t, data, "c2", "1s", 0)
	if !exists(obs + ".applied") {
		t.Errorf("the file its writer left is not marked applied; log:\n%s", log)
	}
}

// Without flock(1) on PATH (macOS has none) the pass cannot take its lock:
// one line, exit 2, before anything is made.
func TestCrawlPassNoFlock(t *testing.T) {
	bins := t.TempDir()
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if e.Name() != "flock" && !exists(filepath.Join(bins, e.Name())) {
				os.Symlink(filepath.Join(dir, e.Name()), filepath.Join(bins, e.Name()))
			}
		}
	}
	parent := t.TempDir()
	log := runPass(t, filepath.Join(parent, "ds"), "f1", "1s", 2, "PATH="+bins)
	if strings.Count(log, "\n") != 1 || !strings.Contains(log, "no flock(1) on PATH") {
		t.Errorf("log: want one line saying flock(1) is missing, got:\n%s", log)
	}
	if ents, _ := os.ReadDir(parent); len(ents) > 0 {
		t.Errorf("a pass without flock(1) made %s", ents[0].Name())
	}
}
