// Package writerrace holds no Go code: its tests run several infohash
// processes (built once by TestMain) on one dataset at once, and compare
// what they leave with what the same runs leave one after another.
// Nothing leaves the machine: fetch gets --bootstrap "" and no peer.
package writerrace

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infohash/infohash/tools/obsgen"
)

var bin string // the infohash built by TestMain

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "writerrace-test")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "infohash")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/infohash/infohash/cmd/infohash").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// now is every run's --now: runs with one clock leave the same state
// whatever their order allows.
const now = "2025-01-10T00:00:00Z"

// result is what one infohash run left: its exit status and stderr.
type result struct {
	code   int
	stderr string
}

// snapshot is the number in the run's last "snapshot=N" (-1: none).
func (r result) snapshot() int {
	m := regexp.MustCompile(`snapshot=(\d+)`).FindAllStringSubmatch(r.stderr, -1)
	if len(m) == 0 {
		return -1
	}
	n, _ := strconv.Atoi(m[len(m)-1][1])
	return n
}

// infohash runs the binary with args, bounded by a minute.
func infohash(t *testing.T, stdin []byte, args ...string) (stdout []byte, r result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("infohash %s: still running after a minute\n%s", strings.Join(args, " "), errb.String())
	}
	code := cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatalf("infohash %s: %v", strings.Join(args, " "), err)
	}
	return out.Bytes(), result{code: code, stderr: errb.String()}
}

// must runs infohash and fails the test unless it exits 0.
func must(t *testing.T, args ...string) result {
	t.Helper()
	_, r := infohash(t, nil, args...)
	if r.code != 0 {
		t.Fatalf("infohash %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
	}
	return r
}

// atOnce runs each of runs (infohash arguments) as its own process, all
// started together, and returns their results in order.
func atOnce(t *testing.T, runs ...[]string) []result {
	t.Helper()
	out := make([]result, len(runs))
	var wg sync.WaitGroup
	for i, args := range runs {
		wg.Go(func() { _, out[i] = infohash(t, nil, args...) })
	}
	wg.Wait()
	return out
}

// observations writes n rows of observations (seed and stream pick
// them; known: hashes of that seed's earlier files they may repeat) to a
// Parquet file in dir and returns its path.
func observations(t *testing.T, dir string, seed, stream uint64, n, known int64) string {
	t.Helper()
	cfg := obsgen.DefaultConfig()
	cfg.Seed, cfg.Stream, cfg.Rows, cfg.Distinct, cfg.Known = seed, stream, n, n/4, known
	cfg.Start = time.Date(2025, 1, 9, 0, 0, 0, 0, time.UTC)
	p := filepath.Join(dir, fmt.Sprintf("obs-%d-%d.parquet", seed, stream))
	if _, err := obsgen.WriteParquet(context.Background(), p, cfg, obsgen.Native); err != nil {
		t.Fatal(err)
	}
	return p
}

// tables is what a test compares of a dataset: each table exported as
// CSV, rows sorted (the ledger without applied_at's clock-free columns:
// id, name, rows), and the totals line of status.
func tables(t *testing.T, data string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, tb := range []string{"state", "leases", "peers", "torrents", "ledger"} {
		b, r := infohash(t, nil, "export", "--data", data, "--table", tb, "--format", "csv", "-o", "-")
		if r.code != 0 {
			t.Fatalf("export --table %s: exit %d\n%s", tb, r.code, r.stderr)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		sort.Strings(lines)
		out[tb] = strings.Join(lines, "\n")
	}
	b, r := infohash(t, nil, "status", "--data", data)
	if r.code != 0 {
		t.Fatalf("status: exit %d\n%s", r.code, r.stderr)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "totals") {
			out["totals"] = l
		}
	}
	return out
}

// sameTables fails the test where the datasets got and want differ.
func sameTables(t *testing.T, got, want string) {
	t.Helper()
	g, w := tables(t, got), tables(t, want)
	for name, wt := range w {
		if g[name] != wt {
			gl, wl := strings.Count(g[name], "\n"), strings.Count(wt, "\n")
			t.Errorf("%s differs from the serial run's (%d lines, want %d)", name, gl, wl)
		}
	}
}

// copyDir copies the dataset at src to dst as cp -a does (a copy gets a
// dataset id of its own at its first writer; the leases planned before
// the copy still merge).
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v\n%s", err, out)
	}
}
