// Package cron holds no Go code: its tests run crawl-pass.sh, as cron
// does, with a freshly built infohash against a dataset in a temp dir.
// Capture and fetch get --bootstrap "": nothing leaves the machine, and
// capture listens on 127.0.0.1 only.
package cron

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

var bin string // the infohash built by TestMain

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "crawl-pass-test")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "infohash")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/infohash/infohash/cmd/infohash").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// logBuf collects a pass's stderr and lets a test wait for a line of it.
type logBuf struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// waitFor waits up to a minute for re to match the log and returns the
// match's first group.
func (l *logBuf) waitFor(t *testing.T, re *regexp.Regexp) string {
	t.Helper()
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(l.String()); m != nil {
			return m[len(m)-1]
		}
	}
	t.Fatalf("no %q in the log:\n%s", re, l.String())
	return ""
}

// pass is crawl-pass.sh running (or run) as pass name over data.
type pass struct {
	cmd *exec.Cmd
	log *logBuf
}

// startPass starts crawl-pass.sh data duration as pass name; env adds
// VAR=value settings.
func startPass(t *testing.T, data, name, duration string, env ...string) *pass {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	p := &pass{cmd: exec.CommandContext(ctx, "./crawl-pass.sh", data, duration), log: &logBuf{}}
	// A pass that hangs is killed with every step it started, and Wait
	// does not wait for a step that still holds its stderr.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p.cmd.Cancel = func() error { return syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) }
	p.cmd.WaitDelay = 5 * time.Second
	p.cmd.Env = append(os.Environ(), "INFOHASH="+bin, "PASS="+name, "BOOTSTRAP=",
		"CAPTURE_ARGS=--dht-listen 127.0.0.1:0", "FETCH_ARGS=--dht-listen 127.0.0.1:0 --timeout 1s --deadline 2s", "LOCK_WAIT=1s")
	p.cmd.Env = append(p.cmd.Env, env...)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Whatever a failed test leaves of the pass (a step the script left
	// running) goes with it.
	t.Cleanup(func() { syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) })
	return p
}

// wait returns the pass's exit status (128+N, as a shell says it, if a
// signal N killed the script). It returns once the script and every step
// it started are gone (they share its stderr).
func (p *pass) wait(t *testing.T) int {
	t.Helper()
	err := p.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0
}

// runPass runs one pass to its end and checks its exit status.
func runPass(t *testing.T, data, name, duration string, want int, env ...string) string {
	t.Helper()
	p := startPass(t, data, name, duration, env...)
	if got := p.wait(t); got != want {
		t.Fatalf("pass %s: exit %d, want %d; log:\n%s", name, got, want, p.log)
	}
	return p.log.String()
}

// ih runs infohash and returns its stdout.
func ih(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	c := exec.Command(bin, args...)
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		t.Fatalf("infohash %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

// column returns one column of a table of data, exported as CSV.
func column(t *testing.T, data, table, col string) []string {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(ih(t, "export", "--data", data, "--table", table, "-f", "csv", "-o", "-"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no CSV header", table)
	}
	i := -1
	for j, name := range rows[0] {
		if name == col {
			i = j
		}
	}
	if i < 0 {
		t.Fatalf("%s: no column %s in %v", table, col, rows[0])
	}
	var out []string
	for _, r := range rows[1:] {
		out = append(out, r[i])
	}
	return out
}

// applied reports whether the ledger holds an input named name.
func applied(t *testing.T, data, name string) bool {
	t.Helper()
	for _, n := range column(t, data, "ledger", "name") {
		if n == name {
			return true
		}
	}
	return false
}

// known reports whether the state holds every one of hashes (hex).
func known(t *testing.T, data string, hashes ...string) bool {
	t.Helper()
	have := map[string]bool{}
	for _, h := range column(t, data, "state", "info_hash") {
		have[h] = true
	}
	for _, h := range hashes {
		if !have[h] {
			return false
		}
	}
	return true
}

// hexList writes hashes as a text list, as an earlier pass's output file.
func hexList(t *testing.T, path string, hashes ...string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Join(hashes, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func hashes(first, n int) []string {
	var out []string
	for i := first; i < first+n; i++ {
		out = append(out, fmt.Sprintf("%040x", i))
	}
	return out
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// liveLeases returns the hashes (hex) whose lease in the leases table has
// not ended by the wall clock.
func liveLeases(t *testing.T, data string) []string {
	t.Helper()
	hashes, until := column(t, data, "leases", "info_hash"), column(t, data, "leases", "lease_until")
	var live []string
	for i, u := range until {
		end, err := time.Parse(time.RFC3339Nano, u)
		if err != nil {
			t.Fatalf("leases: lease_until %q: %v", u, err)
		}
		if end.After(time.Now()) {
			live = append(live, hashes[i])
		}
	}
	return live
}

// statsJSON reads a --stats-json file's numbers.
func statsJSON(t *testing.T, path string) map[string]float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out := map[string]float64{}
	for k, v := range raw {
		if f, ok := v.(float64); ok {
			out[k] = f
		}
	}
	return out
}

// script writes an executable sh script named name, with body, into a
// new temp folder and returns its path.
func script(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// obsParquet writes an observations Parquet file of hashes (hex), as an
// older pass's work/PASS/observations.parquet held them.
func obsParquet(t *testing.T, path string, hashes ...string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	obs := make([]schema.Observation, len(hashes))
	for i, s := range hashes {
		h, _, _, err := schema.ParseHex(s)
		if err != nil {
			t.Fatal(err)
		}
		obs[i] = schema.Observation{InfoHash: h, HashType: 1, ObservedAt: time.Now().UnixMilli(), Source: "dht_get_peers", RunID: "test"}
	}
	w, err := rowio.Create[schema.Observation](path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(obs); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
