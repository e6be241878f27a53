package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/fsutil"
)

// TestStreamFileLockedWhileWritten: "capture -o - > FILE" holds FILE's
// lock while it writes, so that a cron "dedup DIR/in/…" run meanwhile
// does not apply a stream cut short and later the whole one (two
// checksums: its rows counted twice). dedup and merge skip the file, exit
// 3 with one line naming it and its writer, committing nothing of it; a
// second writer redirected to the same file is refused (exit 75); once
// the writer is done, the file applies as usual.
func TestStreamFileLockedWhileWritten(t *testing.T) {
	bin := infohashBinary(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "obs.arrows")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	capture := exec.Command(bin, "capture", "--bootstrap", "", "--dht-listen", "127.0.0.1:0", "--duration", "2m",
		"--dht-state", filepath.Join(dir, "state"), "-o", "-")
	var stderr bytes.Buffer
	capture.Stdout, capture.Stderr = f, &stderr
	if err := capture.Start(); err != nil {
		t.Fatal(err)
	}
	f.Close() // the test's descriptor: the lock is capture's own
	t.Cleanup(func() { capture.Process.Kill(); capture.Wait() })
	writer := "infohash capture (pid " + strconv.Itoa(capture.Process.Pid) + ")"
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if who, busy := fsutil.Writing(out); busy {
			if who != writer {
				t.Fatalf("the lock holder is named %q, want %q", who, writer)
			}
			break
		}
		if time.Now().After(end) {
			t.Fatalf("capture -o - > %s does not lock it; stderr:\n%s", out, stderr.String())
		}
	}

	data := filepath.Join(dir, "ds")
	for _, tc := range []struct{ cmd, stage string }{{"dedup", "dedup"}, {"merge", "merge"}} {
		if tc.cmd == "merge" {
			runBin(t, bin, 0, "dedup", "--data", data, writeHexList(t, dir)) // merge makes no dataset
		}
		stats, prom := filepath.Join(dir, tc.cmd+".json"), filepath.Join(dir, tc.cmd+".prom")
		msg := runBin(t, bin, 3, tc.cmd, "--data", data, "--stats-json", stats, "--metrics-file", prom, out)
		want := tc.stage + ": " + out + ": still being written by " + writer + ": skipped, not applied"
		var errs []string
		for _, l := range strings.Split(msg, "\n") {
			if strings.HasPrefix(l, "infohash: ") {
				errs = append(errs, l)
			}
		}
		if len(errs) != 1 || !strings.Contains(errs[0], want) {
			t.Errorf("%s: errors %q, want one line saying %q", tc.cmd, errs, want)
		}
		// Its summary said inputs=0 only, its --stats-json "inputs":0.
		if !strings.Contains(msg, " inputs=0 skipped_busy=1 ") {
			t.Errorf("%s's summary does not count the file it skipped:\n%s", tc.cmd, msg)
		}
		js, err := os.ReadFile(stats)
		var counts map[string]any
		if err == nil {
			err = json.Unmarshal(js, &counts)
		}
		if err != nil || counts["inputs"] != 0.0 || counts["inputs_skipped_busy"] != 1.0 {
			t.Errorf("%s's --stats-json does not count the file it skipped: %s (%v)", tc.cmd, js, err)
		}
		series := "infohash_" + tc.cmd + "_inputs_skipped_busy 1\n"
		if m, err := os.ReadFile(prom); err != nil || !strings.Contains(string(m), series) {
			t.Errorf("%s's --metrics-file has no %q: %s (%v)", tc.cmd, series, m, err)
		}
	}
	if ledger := runBin(t, bin, 0, "export", "--data", data, "--table", "ledger", "-f", "csv", "-o", "-"); strings.Contains(ledger, out) {
		t.Fatalf("the file being written is in the ledger:\n%s", ledger)
	}

	second, err := os.OpenFile(out, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	c2 := exec.Command(bin, "capture", "--bootstrap", "", "--dht-listen", "127.0.0.1:0", "--duration", "1s",
		"--dht-state", filepath.Join(dir, "state2"), "-o", "-")
	var stderr2 bytes.Buffer
	c2.Stdout, c2.Stderr = second, &stderr2
	err = c2.Run()
	second.Close()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 75 || !strings.Contains(stderr2.String(), "another process holds its lock") {
		t.Fatalf("a second capture into %s: %v, want exit 75 saying the lock is held; stderr:\n%s", out, err, stderr2.String())
	}

	if err := capture.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := capture.Wait(); err == nil || !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("capture after SIGTERM: %v, want exit 130; stderr:\n%s", err, stderr.String())
	}
	if _, busy := fsutil.Writing(out); busy {
		t.Fatal("the file is still locked after its writer exited")
	}
	runBin(t, bin, 0, "dedup", "--data", data, out)
	if ledger := runBin(t, bin, 0, "export", "--data", data, "--table", "ledger", "-f", "csv", "-o", "-"); !strings.Contains(ledger, out) {
		t.Fatalf("the finished file is not in the ledger:\n%s", ledger)
	}
}

// runBin runs the binary and checks its exit status; it returns stdout, or
// stderr when the status is not 0.
func runBin(t *testing.T, bin string, want int, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	c := exec.Command(bin, args...)
	c.Stdout, c.Stderr = &stdout, &stderr
	err := c.Run()
	got := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		got = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("infohash %s: exit %d, want %d; stderr:\n%s", strings.Join(args, " "), got, want, stderr.String())
	}
	if want != 0 {
		return stderr.String()
	}
	return stdout.String()
}

// writeHexList writes a one-hash list into dir and returns its path.
func writeHexList(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "seed.txt")
	if err := os.WriteFile(p, []byte(strings.Repeat("ab", 20)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
