package app

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/dhtboot"
	"github.com/infohash/infohash/tools/badpeers"
)

func fetchPeer(t *testing.T, b badpeers.Behaviour, ts ...badpeers.Torrent) *badpeers.Peer {
	t.Helper()
	p, err := badpeers.Start(b, badpeers.Config{})
	if err != nil {
		t.Fatal(err)
	}
	p.Add(ts...)
	t.Cleanup(func() { p.Close() })
	return p
}

// writeJobs writes jobs to a jobs file at path.
func writeJobs(t *testing.T, path string, jobs []schema.Job) {
	t.Helper()
	writeRows(t, path, jobs)
}

// writeRows writes rows (observations, jobs, results) to a Parquet file
// at path, as infohash's own stages write them.
func writeRows[T any](t *testing.T, path string, rows []T) {
	t.Helper()
	w, err := rowio.Create[T](path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestFetchCLI runs the real binary: Arrow results on stdout, counters on
// stderr and in --stats-json, and the exit statuses of bad input and of
// an interrupted run.
func TestFetchCLI(t *testing.T) {
	bin := infohashBinary(t)
	dir := t.TempDir()
	good := badpeers.NewTorrent(21, 2, 40)
	goodPeer := fetchPeer(t, badpeers.Good, good)
	reject := fetchPeer(t, badpeers.Reject)
	stall := fetchPeer(t, badpeers.Stall)
	other := badpeers.NewTorrent(22, 1, 5)
	jobs := filepath.Join(dir, "jobs.parquet")
	writeJobs(t, jobs, []schema.Job{
		{InfoHash: good.InfoHash, HashType: 1, Attempt: 1, LeaseID: "x", Peers: []string{goodPeer.Addr()}},
		{InfoHash: other.InfoHash, HashType: 1, Attempt: 4, LeaseID: "y"},
	})

	t.Run("ok and rejected to stdout", func(t *testing.T) {
		statsPath := filepath.Join(dir, "stats.json")
		cmd := exec.Command(bin, "fetch", jobs, "-o", "-", "--no-dht", "--peer", reject.Addr(), "--stats-json", statsPath)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v\n%s", err, stderr.String())
		}
		r, err := rowio.Open[schema.Result]("-", &stdout)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := r.ReadAll()
		if err != nil || len(rows) != 2 {
			t.Fatalf("%d rows, err %v", len(rows), err)
		}
		got := map[string]string{}
		for _, row := range rows {
			got[row.LeaseID] = row.Outcome
		}
		// The good job also tries the --peer reject peer, but the good peer wins.
		if got["x"] != schema.OutcomeOK || got["y"] != schema.OutcomeRejected {
			t.Fatalf("outcomes %v", got)
		}
		var st map[string]any
		b, err := os.ReadFile(statsPath)
		if err != nil || json.Unmarshal(b, &st) != nil {
			t.Fatalf("stats json: %v %s", err, b)
		}
		for _, k := range []string{"lookups", "peers_found", "connects_ok", "connects_failed", "connects_cancelled", "connects_local_error", "handshakes", "extension_support", "extension_bad", "metadata_received", "verified", "outcomes", "peer_failures"} {
			if _, ok := st[k]; !ok {
				t.Errorf("stats json lacks %q", k)
			}
		}
		if !strings.Contains(stderr.String(), "verified") || !strings.Contains(stderr.String(), "rejected=1") {
			t.Fatalf("stderr lacks the counters:\n%s", stderr.String())
		}
	})

	t.Run("bad input", func(t *testing.T) {
		bad := filepath.Join(dir, "bad.parquet")
		os.WriteFile(bad, []byte("nope"), 0o644)
		out := filepath.Join(dir, "never.parquet")
		cmd := exec.Command(bin, "fetch", bad, "-o", out, "--no-dht")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		if code := cmd.ProcessState.ExitCode(); code != 2 {
			t.Fatalf("exit %d (%v), want 2\n%s", code, err, stderr.String())
		}
		if lines := strings.Split(strings.TrimSpace(stderr.String()), "\n"); len(lines) != 1 || !strings.Contains(lines[0], bad) {
			t.Fatalf("want one line naming %s, got:\n%s", bad, stderr.String())
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatal("output written after bad input")
		}
	})

	t.Run("interrupted", func(t *testing.T) {
		var js []schema.Job
		js = append(js, schema.Job{InfoHash: good.InfoHash, Peers: []string{goodPeer.Addr()}})
		for i := range 4 {
			js = append(js, schema.Job{InfoHash: schema.Hash{9, byte(i)}, Peers: []string{stall.Addr()}})
		}
		in, out := filepath.Join(dir, "int.parquet"), filepath.Join(dir, "int-out.parquet")
		writeJobs(t, in, js)
		// One job at a time: the good job runs first, and the stalling
		// peer's first connection comes only once its result is in. The
		// jobs' peers are on loopback: a --dht-listen there lets fetch
		// dial them.
		cmd := exec.Command(bin, "fetch", in, "-o", out, "--no-dht", "--dht-listen", "127.0.0.1:0", "--timeout", "1m", "--peer-timeout", "1m", "--concurrency", "1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		before := stall.Accepted()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		// Interrupt once the good job is done (a fixed 700 ms sleep was
		// too short for a loaded machine: 0 rows).
		for stall.Accepted() == before {
			select {
			case <-exited:
				t.Fatalf("fetch exited before reaching the stalling peer: %v\n%s", cmd.ProcessState, stderr.String())
			case <-time.After(5 * time.Millisecond):
			}
		}
		cmd.Process.Signal(syscall.SIGINT)
		<-exited
		if code := cmd.ProcessState.ExitCode(); code != 130 {
			t.Fatalf("exit %d, want 130\n%s", code, stderr.String())
		}
		r, err := rowio.Open[schema.Result](out, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		rows, err := r.ReadAll()
		if err != nil || len(rows) != 1 || rows[0].Outcome != schema.OutcomeOK {
			t.Fatalf("want only the finished ok row, got %d rows (%v)", len(rows), err)
		}
	})
}

// TestFetchRefusesToOverwriteInput: -o naming the jobs file, however it is
// spelt or linked, is a usage error before any work; the input survives.
func TestFetchRefusesToOverwriteInput(t *testing.T) {
	bin := infohashBinary(t)
	dir := t.TempDir()
	jobs := filepath.Join(dir, "jobs.parquet")
	writeJobs(t, jobs, []schema.Job{{InfoHash: schema.Hash{1}, Peers: []string{"127.0.0.1:9"}}})
	before, err := os.ReadFile(jobs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(jobs, filepath.Join(dir, "sym.parquet")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(jobs, filepath.Join(dir, "hard.parquet")); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct{ in, out string }{
		"dot slash":         {"jobs.parquet", "./jobs.parquet"},
		"dot dot":           {"jobs.parquet", "sub/../jobs.parquet"},
		"absolute":          {"jobs.parquet", jobs},
		"symlink as output": {"jobs.parquet", "sym.parquet"},
		"symlink as input":  {"sym.parquet", "jobs.parquet"},
		"hard link":         {"jobs.parquet", "hard.parquet"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(bin, "fetch", tt.in, "-o", tt.out, "--no-dht", "--peer", "127.0.0.1:9")
			cmd.Dir = dir
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != 2 {
				t.Fatalf("exit %d, want 2\n%s", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), "is the input") || strings.Contains(stderr.String(), "attempted") {
				t.Fatalf("stderr:\n%s", stderr.String())
			}
			if after, err := os.ReadFile(jobs); err != nil || !bytes.Equal(after, before) {
				t.Fatalf("input changed (%v)", err)
			}
			if fi, err := os.Lstat(filepath.Join(dir, "sym.parquet")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Fatalf("symlink replaced (%v)", err)
			}
		})
	}
}

// TestFetchJSONLogs: with --log-format json every line fetch writes on
// stderr is a JSON record, and the summary is one of them ("fetch: done",
// the counters under "stats"); text logs keep the text summary.
func TestFetchJSONLogs(t *testing.T) {
	bin := infohashBinary(t)
	dir := t.TempDir()
	tor := badpeers.NewTorrent(23, 1, 5)
	good := fetchPeer(t, badpeers.Good, tor)
	jobs := filepath.Join(dir, "jobs.parquet")
	writeJobs(t, jobs, []schema.Job{{InfoHash: tor.InfoHash, Peers: []string{good.Addr()}}})
	for _, format := range []string{"json", "text"} {
		t.Run(format, func(t *testing.T) {
			cmd := exec.Command(bin, "fetch", jobs, "-o", filepath.Join(dir, format+".parquet"), "--no-dht", "--dht-listen", "127.0.0.1:0",
				"--log-format", format)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v\n%s", err, stderr.String())
			}
			if format == "text" {
				if !strings.Contains(stderr.String(), "fetch: 1 job, 1 attempted") || !strings.Contains(stderr.String(), "  outcomes: ok=1\n") ||
					strings.Contains(stderr.String(), "out of reach") {
					t.Fatalf("no text summary, or an out-of-reach warning:\n%s", stderr.String())
				}
				return
			}
			var done []map[string]any
			for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
				var rec map[string]any
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatalf("stderr line is not JSON: %q\n%s", line, stderr.String())
				}
				if rec["msg"] == "fetch: done" {
					done = append(done, rec)
				}
			}
			if len(done) != 1 {
				t.Fatalf("%d summary records:\n%s", len(done), stderr.String())
			}
			st, _ := done[0]["stats"].(map[string]any)
			outcomes, _ := st["outcomes"].(map[string]any)
			if st["jobs"] != 1.0 || st["attempted"] != 1.0 || st["unfinished"] != 0.0 || outcomes["ok"] != 1.0 {
				t.Fatalf("summary record %v", done[0])
			}
		})
	}
}

// TestBootstrapFlagShared: capture and fetch take --bootstrap the same
// way, with the same default routers (which no test contacts).
func TestBootstrapFlagShared(t *testing.T) {
	var flags []*cli.StringSliceFlag
	for _, c := range commands() {
		if c.Name != "capture" && c.Name != "fetch" {
			continue
		}
		for _, f := range c.Flags {
			if f.Names()[0] == "bootstrap" {
				sf, ok := f.(*cli.StringSliceFlag)
				if !ok {
					t.Fatalf("%s --bootstrap is a %T", c.Name, f)
				}
				flags = append(flags, sf)
			}
		}
	}
	if len(flags) != 2 {
		t.Fatalf("found %d --bootstrap flags, want capture's and fetch's", len(flags))
	}
	for _, f := range flags {
		if !reflect.DeepEqual(f.Value.Value(), dhtboot.Default()) || f.Usage != flags[0].Usage {
			t.Fatalf("--bootstrap differs: %q %q vs %q", f.Value.Value(), f.Usage, flags[0].Usage)
		}
	}
}

// TestCaptureBootstrapRepeatable: capture takes repeated --bootstrap
// flags as well as comma-separated lists (it used to keep only the last
// flag). The addresses are loopback ports nobody answers on: the run is
// partial (exit 3, TestCaptureSilentDHTExit3).
func TestCaptureBootstrapRepeatable(t *testing.T) {
	out := filepath.Join(t.TempDir(), "obs.parquet")
	cmd := exec.Command(infohashBinary(t), "capture", "-o", out, "--passive", "--dht-listen", "127.0.0.1:0", "--duration", "500ms",
		"--bootstrap", "127.0.0.1:1", "--bootstrap", "127.0.0.1:2,127.0.0.1:3")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 3 {
		t.Fatalf("%v, want exit 3\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "bootstrap=3") {
		t.Fatalf("want 3 bootstrap nodes:\n%s", stderr.String())
	}
}

// TestFetchWarnsAllOutOfReach: a --no-dht run over jobs whose only peers
// are on loopback, with nothing pointing the run there, dials none of
// them and says why in one warning; pointed there (--dht-listen on
// loopback), it fetches the torrent and does not warn.
func TestFetchWarnsAllOutOfReach(t *testing.T) {
	bin := infohashBinary(t)
	dir := t.TempDir()
	tor := badpeers.NewTorrent(29, 1, 5)
	good := fetchPeer(t, badpeers.Good, tor)
	jobs := filepath.Join(dir, "jobs.parquet")
	writeJobs(t, jobs, []schema.Job{{InfoHash: tor.InfoHash, Peers: []string{good.Addr()}}})
	for _, tt := range []struct {
		name    string
		args    []string
		outcome string
		warns   bool
	}{
		{"not pointed", nil, "no_peers=1", true},
		{"loopback listen", []string{"--dht-listen", "127.0.0.1:0"}, "ok=1", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"fetch", jobs, "-o", filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".parquet"),
				"--no-dht", "--timeout", "20s"}, tt.args...)
			cmd := exec.Command(bin, args...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v\n%s", err, stderr.String())
			}
			out := stderr.String()
			if !strings.Contains(out, "  outcomes: "+tt.outcome+"\n") {
				t.Fatalf("want outcomes %s:\n%s", tt.outcome, out)
			}
			warned := strings.Contains(out, "every peer found was out of reach") && strings.Contains(out, "peers_out_of_reach=1")
			if warned != tt.warns {
				t.Fatalf("warned %v, want %v:\n%s", warned, tt.warns, out)
			}
		})
	}
}
