package cron

import (
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// A step left running by a pass killed with SIGKILL (the script alone:
// its capture runs on, writing into the pass's folder) holds the pass
// lock it inherited, so the next pass skips (exit 75), its log saying
// what may hold the lock; once the step ends by itself, the pass after
// applies what it wrote.
func TestCrawlPassLeftoverStepHoldsLock(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ds")
	p := startPass(t, data, "k1", "3s")
	p.log.waitFor(t, regexp.MustCompile(`capture: listening`))
	capture := child(t, p.cmd.Process.Pid)
	if err := syscall.Kill(p.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	log := runPass(t, data, "k2", "1s", 75)
	if !strings.Contains(log, "a step a killed pass left running: fuser -v names it") {
		t.Errorf("the log does not say a leftover step may hold the lock:\n%s", log)
	}
	if syscall.Kill(capture, 0) != nil {
		t.Fatal("k1's capture ended before k2 ran: the test proves nothing")
	}
	p.wait(t) // the script, and the capture that shares its stderr
	log = runPass(t, data, "k3", "1s", 0)
	if !applied(t, data, filepath.Join(data, "work", "k1", "observations.arrows")) && !strings.Contains(log, "k1/observations.arrows is empty") {
		t.Errorf("k3 did not apply k1's observations; log:\n%s", log)
	}
}
