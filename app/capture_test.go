package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/capture"
	"github.com/infohash/infohash/tools/testnet"
)

var (
	captureBinOnce sync.Once
	captureBin     string
	captureBinErr  error
)

// infohashBinary builds the real binary once per test process.
func infohashBinary(t *testing.T) string {
	t.Helper()
	captureBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "infohash-bin-*")
		if err != nil {
			captureBinErr = err
			return
		}
		captureBin = filepath.Join(dir, "infohash")
		out, err := exec.Command("go", "build", "-o", captureBin, "../cmd/infohash").CombinedOutput()
		if err != nil {
			captureBinErr = errors.New(string(out))
		}
	})
	if captureBinErr != nil {
		t.Fatalf("building infohash: %v", captureBinErr)
	}
	return captureBin
}

func captureTestnet(t *testing.T) *testnet.Net {
	t.Helper()
	// Start's context is the testnet's lifetime, not a start-up budget:
	// a 30 s timeout here stopped its searchers mid-test, or failed a
	// start slowed by load.
	n, err := testnet.Start(t.Context(), testnet.Config{Seed: 9, Nodes: 10, Torrents: 15, Dead: 2, Searched: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

// TestCaptureSIGINTCommitsWhatWasReceived runs the real binary against the
// testnet, interrupts it once it has written observations, and reads the
// file back: it must hold them all.
func TestCaptureSIGINTCommitsWhatWasReceived(t *testing.T) {
	truth := captureTestnet(t).Truth()
	dir := t.TempDir()
	out, stats := filepath.Join(dir, "obs.parquet"), filepath.Join(dir, "stats.json")
	cmd := exec.Command(infohashBinary(t), "capture", "-o", out, "--bootstrap", strings.Join(truth.Bootstrap, ","),
		"--dht-listen", "127.0.0.1:0", "--duration", "2m", "--dht-rate", "100000", "--stats-json", stats, "--data", dir,
		"--log-format", "json")
	stderr := &progressWatch{written: make(chan struct{})}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once capture has written observations to its output, as
	// its progress record (every 10 s) says: waiting for the testnet's
	// first sample_infohashes query and then a fixed 500 ms for the
	// answers to be taken in could interrupt a loaded run before it had
	// recorded any.
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-stderr.written:
	case err := <-exited:
		t.Fatalf("capture exited before writing observations: %v; stderr:\n%s", err, stderr.String())
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-exited
		t.Fatalf("capture wrote no observations in a minute; stderr:\n%s", stderr.String())
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := <-exited
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130; stderr:\n%s", err, stderr.String())
	}
	var st capture.Stats
	b, err := os.ReadFile(stats)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	r, err := rowio.Open[schema.Observation](out, nil)
	if err != nil {
		t.Fatalf("%v; stderr:\n%s", err, stderr.String())
	}
	defer r.Close()
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(rows)) < stderr.observations || int64(len(rows)) != st.Observations || st.StopReason != capture.StopInterrupted {
		t.Fatalf("%d rows, %d written before SIGINT, stats %+v", len(rows), stderr.observations, st)
	}
	if _, err := os.Stat(filepath.Join(dir, "dht-state", "dht-state.json")); err != nil {
		t.Errorf("--data did not keep the DHT state: %v", err)
	}
}

// progressWatch collects capture's JSON log records and closes written at
// the first "capture: progress" record that counts observations written
// to the output, noting how many; its elapsed must be a duration's text
// ("10s"), as in the other stages' progress records.
type progressWatch struct {
	mu           sync.Mutex
	b            bytes.Buffer
	scanned      int // bytes of b looked at: whole lines
	observations int64
	written      chan struct{}
}

func (w *progressWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	for {
		line, _, ok := bytes.Cut(w.b.Bytes()[w.scanned:], []byte("\n"))
		if !ok {
			return len(p), nil
		}
		w.scanned += len(line) + 1
		var rec struct {
			Msg          string `json:"msg"`
			Observations int64  `json:"observations"`
			Elapsed      string `json:"elapsed"` // "10s", as the other stages' progress says it (not nanoseconds)
		}
		if w.observations == 0 && json.Unmarshal(line, &rec) == nil && rec.Msg == "capture: progress" && rec.Observations > 0 &&
			strings.HasSuffix(rec.Elapsed, "s") {
			w.observations = rec.Observations
			close(w.written)
		}
	}
}

func (w *progressWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func TestCaptureArrowOnStdout(t *testing.T) {
	truth := captureTestnet(t).Truth()
	cmd := exec.Command(infohashBinary(t), "capture", "-o", "-", "--bootstrap", strings.Join(truth.Bootstrap, ","),
		"--dht-listen", "127.0.0.1:0", "--duration", "2s", "--dht-rate", "100000", "--log-format", "json")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v; stderr:\n%s", err, stderr.String())
	}
	r, err := rowio.Open[schema.Observation]("-", &stdout)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	had := truth.AllHashes()
	samples := 0
	for _, row := range rows {
		if row.Source == schema.SourceSampleInfohashes {
			samples++
			if !had[schema.Hex(row.InfoHash)] {
				t.Errorf("sampled hash %x not in the testnet", row.InfoHash)
			}
		}
	}
	if samples == 0 || !strings.Contains(stderr.String(), `"msg":"capture: done"`) {
		t.Fatalf("%d rows, %d samples; stderr:\n%s", len(rows), samples, stderr.String())
	}
	checkNumbers(t, doneRecord(t, stderr.String(), "capture: done"), "stop", "output")
}

func TestCaptureBadFlagsExit2(t *testing.T) {
	tests := map[string][]string{
		"bad listen":    {"capture", "-o", "x.parquet", "--dht-listen", "nope", "--bootstrap", "127.0.0.1:1"},
		"bad bootstrap": {"capture", "-o", "x.parquet", "--dht-listen", "127.0.0.1:0", "--bootstrap", "127.0.0.1"},
		"no output":     {"capture", "--dht-listen", "127.0.0.1:0"},
		"extra arg":     {"capture", "-o", "x.parquet", "stray"},
	}
	for name, args := range tests {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			dir := t.TempDir()
			for i, a := range args {
				if a == "x.parquet" {
					args[i] = filepath.Join(dir, a)
				}
			}
			code := Main(append([]string{"infohash"}, args...), nil, &stdout, &stderr)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr: %s", code, stderr.String())
			}
			if _, err := os.Stat(filepath.Join(dir, "x.parquet")); err == nil {
				t.Fatal("bad input left an output file")
			}
		})
	}
}

// A --data whose parent folder is missing (a mistyped path) is refused,
// as dedup refuses it, with nothing created: no tree of folders for the
// DHT state, no output. A new DIR in an existing folder is a first run.
func TestCaptureMistypedData(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "obs.parquet")
	typo := filepath.Join(dir, "srv", "ih", "data")
	_, stderr, code := runMain(t, "capture", "--data", typo, "--bootstrap", "", "--dht-listen", "127.0.0.1:0", "--duration", "1ms", "-o", out)
	want := "parent folder " + filepath.Join(dir, "srv", "ih") + " does not exist"
	if code != 2 || !strings.Contains(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("exit %d, stderr %q; want 2 and one line with %q", code, stderr, want)
	}
	for _, p := range []string{filepath.Join(dir, "srv"), out} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("capture with a mistyped --data made %s: %v", p, err)
		}
	}

	data := filepath.Join(dir, "ds")
	_, stderr, code = runMain(t, "capture", "--data", data, "--bootstrap", "", "--dht-listen", "127.0.0.1:0", "--duration", "1ms", "-o", out)
	if code != 0 {
		t.Fatalf("capture with a new --data in an existing folder: exit %d; stderr: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(data, "dht-state")); err != nil {
		t.Fatalf("capture kept no DHT state in the new --data: %v", err)
	}
}

// A --run-id that is not UTF-8 is refused, with nothing written: it goes
// into every observation's run_id, a STRING column that DuckDB refuses to
// read with other bytes in it.
func TestCaptureRunIDMustBeUTF8(t *testing.T) {
	out := filepath.Join(t.TempDir(), "obs.parquet")
	_, stderr, code := runMain(t, "capture", "--bootstrap", "", "--dht-listen", "127.0.0.1:0", "--duration", "1ms",
		"--run-id", "run\xff", "-o", out)
	want := `capture: --run-id "run\xff": not valid UTF-8`
	if code != 2 || !strings.Contains(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("exit %d, stderr %q; want 2 and one line with %q", code, stderr, want)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("capture wrote %s: %v", out, err)
	}
}

// A --dht-state whose file is of a version this build does not know is
// refused with one line naming the file and the version (exit 2), and
// nothing is captured. Its one saved contact is on loopback.
func TestCaptureDHTStateUnknownVersion(t *testing.T) {
	dir := t.TempDir()
	st := filepath.Join(dir, "st")
	if err := os.Mkdir(st, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(st, "dht-state.json")
	saved := `{"version":9,"nodes":[{"id":"0102030405060708090a0b0c0d0e0f1011121314","table":[{"id":"0102030405060708090a0b0c0d0e0f1011121315","addr":"127.0.0.9:6881"}]}]}`
	if err := os.WriteFile(file, []byte(saved), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "obs.parquet")
	_, stderr, code := runMain(t, "capture", "--bootstrap", "", "--dht-listen", "127.0.0.1:0", "--duration", "1ms",
		"--dht-state", st, "-o", out)
	want := "capture: dht state " + file + ": unknown version 9 (this build reads version 1"
	if code != 2 || !strings.Contains(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("exit %d, stderr %q; want 2 and one line with %q", code, stderr, want)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("capture wrote %s: %v", out, err)
	}
	if b, _ := os.ReadFile(file); string(b) != saved {
		t.Fatalf("the state file was rewritten:\n%s", b)
	}
}

// TestCaptureSilentDHTExit3: capture whose router never answers (a
// socket on 127.0.0.1 that reads and drops) and that hears no query
// ends partial, exit 3, with one last line saying what happened and what
// to check, its (empty) output written all the same; it used to exit 0,
// and crawl-pass and cron saw a pass that worked. --bootstrap "" (nobody
// asked) still exits 0.
func TestCaptureSilentDHTExit3(t *testing.T) {
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 1<<16)
		for {
			if _, _, err := c.ReadFrom(buf); err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { c.Close(); <-done })
	for _, tt := range []struct {
		boot string
		code int
		last string
	}{
		{c.LocalAddr().String(), 3, "infohash: capture: no DHT node answered the bootstrap (check the network and --bootstrap), nor sent a query, in 1s: nothing captured: partial"},
		{"", 0, ""},
	} {
		t.Run("bootstrap "+tt.boot, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "obs.parquet")
			_, stderr, code := runMain(t, "capture", "--bootstrap", tt.boot, "--dht-listen", "127.0.0.1:0", "--duration", "1s", "-o", out)
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			if code != tt.code || (tt.last != "" && lines[len(lines)-1] != tt.last) {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit %d, last line %q", code, stderr, tt.code, tt.last)
			}
			if rows := readRows[schema.Observation](t, out); len(rows) != 0 {
				t.Errorf("%d observations, want the output written, empty", len(rows))
			}
		})
	}
}
