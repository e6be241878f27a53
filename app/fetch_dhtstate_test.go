package app

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// heldBySomeone reports whether another open file holds path's flock(2).
func heldBySomeone(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return true
	}
	_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return false
}

// waitHeld waits (up to a minute: a loaded machine starts a binary slowly)
// until path's lock is held.
func waitHeld(t *testing.T, path, what string, stderr *bytes.Buffer) {
	t.Helper()
	for end := time.Now().Add(time.Minute); !heldBySomeone(path); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%s never took %s:\n%s", what, path, stderr.String())
		}
	}
}

// TestFetchDHTStateBesideCapture runs the real binaries on the testnet: a
// capture and a fetch share one --dht-state directory at the same time
// (each keeps its own files and lock), while a second fetch on it is
// refused with exit 75 before it reads a job. The fetch leaves its node
// ID and nodes behind for the next run.
func TestFetchDHTStateBesideCapture(t *testing.T) {
	n := captureTestnet(t)
	truth := n.Truth()
	boot := strings.Join(truth.Bootstrap, ",")
	dir := t.TempDir()
	state := filepath.Join(dir, "dht-state")
	bin := infohashBinary(t)

	capture := exec.Command(bin, "capture", "-o", filepath.Join(dir, "obs.parquet"), "--bootstrap", boot,
		"--dht-listen", "127.0.0.1:0", "--duration", "1m", "--dht-state", state)
	var captureErr bytes.Buffer
	capture.Stderr = &captureErr
	if err := capture.Start(); err != nil {
		t.Fatal(err)
	}
	captureDone := make(chan error, 1)
	go func() { captureDone <- capture.Wait() }()
	defer func() {
		capture.Process.Signal(syscall.SIGINT)
		<-captureDone
	}()
	waitHeld(t, filepath.Join(state, "lock"), "capture", &captureErr)

	// The first fetch holds the state while it waits for its jobs.
	first := exec.Command(bin, "fetch", "-", "-o", filepath.Join(dir, "r1.parquet"), "--bootstrap", boot,
		"--dht-listen", "127.0.0.1:0", "--dht-state", state)
	jobs, err := first.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var firstErr bytes.Buffer
	first.Stderr = &firstErr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	firstDone := make(chan error, 1)
	go func() { firstDone <- first.Wait() }()
	defer func() {
		jobs.Close()
		<-firstDone
	}()
	waitHeld(t, filepath.Join(state, "fetch.lock"), "the first fetch", &firstErr)

	hashes := filepath.Join(dir, "hashes.txt")
	if err := os.WriteFile(hashes, []byte(truth.Announced[0].InfoHash+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r2 := filepath.Join(dir, "r2.parquet")
	second := exec.Command(bin, "fetch", hashes, "-o", r2, "--bootstrap", boot, "--dht-listen", "127.0.0.1:0", "--dht-state", state)
	out, err := second.CombinedOutput()
	if code := second.ProcessState.ExitCode(); code != 75 || !strings.Contains(string(out), "--dht-state "+state+" is in use by another fetch (pid ") {
		t.Fatalf("second fetch on the state: exit %d (%v):\n%s\nwant 75 naming %s", code, err, out, state)
	}
	if _, err := os.Stat(r2); !os.IsNotExist(err) {
		t.Errorf("the refused fetch wrote %s: %v", r2, err)
	}

	if _, err := jobs.Write([]byte(truth.Announced[0].InfoHash + "\n")); err != nil {
		t.Fatal(err)
	}
	jobs.Close()
	if err := <-firstDone; err != nil {
		t.Fatalf("fetch beside capture: %v\n%s", err, firstErr.String())
	}
	firstDone <- nil // for the deferred wait
	if _, err := os.Stat(filepath.Join(dir, "r1.parquet")); err != nil {
		t.Fatalf("fetch beside capture: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(state, "fetch-dht.json"))
	if err != nil || !bytes.Contains(b, []byte(`"kind": "infohash fetch DHT state"`)) {
		t.Fatalf("fetch's state: %v\n%s", err, b)
	}

	capture.Process.Signal(syscall.SIGINT)
	if err := <-captureDone; exitCode(err) != 130 {
		t.Fatalf("capture beside fetch: %v\n%s", err, captureErr.String())
	}
	captureDone <- nil
	if _, err := os.Stat(filepath.Join(state, "dht-state.json")); err != nil {
		t.Fatalf("capture's state: %v", err)
	}
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestFetchDHTStateUsage: a --dht-state that is a file, and -o or
// --stats-json inside the state directory, are usage errors before the
// run starts.
func TestFetchDHTStateUsage(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	state := filepath.Join(dir, "st")
	hashes := filepath.Join(dir, "h.txt")
	for _, p := range []string{file, hashes} {
		if err := os.WriteFile(p, []byte(hex.EncodeToString(make([]byte, 20))+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(state, 0o755); err != nil {
		t.Fatal(err)
	}
	// The router is a loopback port nobody answers on; no run gets as far
	// as the DHT.
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"state is a file", []string{"--dht-state", file, "-o", filepath.Join(dir, "r.parquet")}, "--dht-state " + file + ": not a directory"},
		{"-o in the state", []string{"--dht-state", state, "-o", filepath.Join(state, "r.parquet")}, "in the --dht-state directory"},
		{"--stats-json in the state", []string{"--dht-state", state, "-o", filepath.Join(dir, "r.parquet"), "--stats-json", filepath.Join(state, "s.json")}, "in the --dht-state directory"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"fetch", hashes, "--bootstrap", "127.0.0.1:1", "--dht-listen", "127.0.0.1:0"}, tt.args...)
			_, stderr, code := runMain(t, args...)
			if code != 2 || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, stderr, tt.want)
			}
		})
	}
}

// TestFetchSavesDHTStateWhenStdoutStalls: "fetch --dht-state DIR -o -"
// into a pipe nobody reads blocks writing its results; SIGTERM twice ends
// it (exit 130) with the DHT node's state saved all the same, for the
// next run to start warm, and a message saying that the jobs whose rows
// did not get through stay leased. It used to exit without saving it.
func TestFetchSavesDHTStateWhenStdoutStalls(t *testing.T) {
	n := captureTestnet(t)
	boot := strings.Join(n.Truth().Bootstrap, ",")
	dir := t.TempDir()
	state := filepath.Join(dir, "dht-state")
	hashes := filepath.Join(dir, "hashes.txt")
	if err := os.WriteFile(hashes, []byte(hexLines("dht-stall", 5000)), 0o644); err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close() // held open and never read
	if _, err := unix.FcntlInt(r.Fd(), unix.F_SETPIPE_SZ, stalledPipe); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(infohashBinary(t), "fetch", "--bootstrap", boot, "--dht-listen", "127.0.0.1:0", "--dht-state", state,
		"--peer", "127.0.0.1:1", "--concurrency", "50", "--timeout", "5s", hashes, "-o", "-")
	stderr := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = w, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer cmd.Process.Kill()
	waitFor(t, "the pipe to fill", func() bool { return pipeHolds(r, stalledPipe) })
	cmd.Process.Signal(syscall.SIGTERM)
	waitStopSeen(t, stderr)
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if exitCode(err) != 130 {
			t.Fatalf("exit %v, want 130; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(hangGuard):
		t.Fatalf("still running %s after the second SIGTERM; stderr:\n%s", hangGuard, stderr.String())
	}
	// Ended by the second SIGTERM ("at once"), not by the end of the
	// grace 10 s after the first: the line says which, untimed.
	if !strings.Contains(stderr.String(), "stopped by a second signal") {
		t.Fatalf("stderr does not say the second SIGTERM stopped it:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "the output could not be delivered") ||
		!strings.Contains(stderr.String(), "stay leased until their lease ends") {
		t.Fatalf("stderr does not say the output was cut and what stays leased:\n%s", stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(state, "fetch-dht.json"))
	if err != nil {
		t.Fatalf("fetch's DHT state was not saved: %v; stderr:\n%s", err, stderr.String())
	}
	var saved struct {
		Kind  string            `json:"kind"`
		Nodes []json.RawMessage `json:"nodes"`
	}
	if err := json.Unmarshal(b, &saved); err != nil || saved.Kind != "infohash fetch DHT state" || len(saved.Nodes) == 0 {
		t.Fatalf("fetch's DHT state (%v) holds no nodes:\n%s", err, b)
	}
}
