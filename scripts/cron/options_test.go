package cron

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// An argument starting with "-" is an option, not DATA_DIR: --help and -h
// print the usage (exit 0), any other is refused (exit 2, one line), and
// neither makes a folder or starts a step. --help used to be taken for
// DATA_DIR: ./--help/ made, rm run on it, and a capture started. "--"
// ends the options, so a DATA_DIR that starts with "-" is still a pass.
func TestCrawlPassOptions(t *testing.T) {
	script, err := filepath.Abs("crawl-pass.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		args      []string
		rc        int
		stdout    string // what stdout holds
		stderr    string // what the one line of stderr holds; "" none
		madeEntry string // the one entry the run makes in its folder; "" none
		env       []string
	}{
		{"--help", []string{"--help"}, 0, "crawl-pass.sh [--] DATA_DIR [CAPTURE_DURATION]", "", "", nil},
		{"-h after DATA_DIR", []string{"ds", "-h"}, 0, "Exit statuses:", "", "", nil},
		{"--help names PASS", []string{"--help"}, 0, "PASS (the pass's name", "", "", nil},
		{"--help names the completed gauge", []string{"--help"}, 0, "infohash_crawl_pass_last_completed_timestamp_seconds", "", "", nil},
		{"unknown option", []string{"-v", "1s"}, 2, "", "crawl-pass.sh: -v: no such option", "", nil},
		{"unknown option after DATA_DIR", []string{"ds", "--duration=1s"}, 2, "", "crawl-pass.sh: --duration=1s: no such option", "", nil},
		{"DATA_DIR after --", []string{"--", "-ds", "1s"}, 0, "", "", "-ds", nil},
		{"no DATA_DIR", nil, 2, "", "usage: crawl-pass.sh DATA_DIR [CAPTURE_DURATION]", "", nil},
		// INFOHASH_DATA is infohash's --data, which the pass does not read:
		// the usage line says how to give it as DATA_DIR.
		{"no DATA_DIR, INFOHASH_DATA set", nil, 2, "", `(INFOHASH_DATA is infohash's --data, not read for DATA_DIR: crawl-pass.sh "$INFOHASH_DATA")`,
			"", []string{"INFOHASH_DATA=/srv/ih"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var out, errb bytes.Buffer
			// A run taken for a pass of 10 minutes (no CAPTURE_DURATION)
			// is stopped, with every step it started.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c := exec.CommandContext(ctx, script, tc.args...)
			c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
			c.WaitDelay = 5 * time.Second
			c.Dir = dir
			c.Env = append(os.Environ(), "INFOHASH="+bin, "PASS=o1", "BOOTSTRAP=", "CAPTURE_ARGS=--dht-listen 127.0.0.1:0",
				"FETCH_ARGS=--dht-listen 127.0.0.1:0 --timeout 1s --deadline 2s", "LOCK_WAIT=1s")
			c.Env = append(c.Env, tc.env...)
			c.Stdout, c.Stderr = &out, &errb
			rc := 0
			if err := c.Run(); err != nil {
				var ee *exec.ExitError
				if !errors.As(err, &ee) {
					t.Fatal(err)
				}
				rc = ee.ExitCode()
			}
			if rc != tc.rc {
				t.Fatalf("exit %d, want %d; stderr:\n%s", rc, tc.rc, errb.String())
			}
			if !strings.Contains(out.String(), tc.stdout) || (tc.stdout == "" && tc.madeEntry == "" && out.Len() > 0) {
				t.Errorf("stdout lacks %q:\n%s", tc.stdout, out.String())
			}
			if tc.madeEntry == "" {
				if e := errb.String(); tc.stderr == "" && e != "" || tc.stderr != "" && (strings.Count(e, "\n") != 1 || !strings.Contains(e, tc.stderr)) {
					t.Errorf("stderr: want one line holding %q (none if empty), got:\n%s", tc.stderr, e)
				}
			}
			ents, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var made []string
			for _, e := range ents {
				made = append(made, e.Name())
			}
			if want := []string{tc.madeEntry}; tc.madeEntry == "" && len(made) > 0 || tc.madeEntry != "" && (len(made) != 1 || made[0] != tc.madeEntry) {
				t.Errorf("the run made %q in its folder, want %q; stderr:\n%s", made, want, errb.String())
			}
			if tc.madeEntry != "" && !applied(t, filepath.Join(dir, tc.madeEntry), filepath.Join(dir, tc.madeEntry, "work", "o1", "observations.arrows")) {
				t.Errorf("the pass over %s applied no observations; stderr:\n%s", tc.madeEntry, errb.String())
			}
		})
	}
}
