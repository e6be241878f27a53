package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

var bin string

// TestMain builds the real binary once; the tests run it as users do.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "infohash-e2e")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "infohash")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	stdout, stderr string
	code           int
}

func runBin(t *testing.T, stdin []byte, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return runCmd(t, exec.CommandContext(ctx, bin, args...), stdin)
}

// runCmd runs cmd with stdin (if not nil) and returns what it wrote and
// its exit code; a command that cannot run fails the test.
func runCmd(t *testing.T, cmd *exec.Cmd, stdin []byte) result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{out.String(), errb.String(), code}
}

func genObs(seed uint64, n, distinct int) []schema.Observation {
	r := rand.New(rand.NewPCG(seed, 7))
	hs := make([]schema.Hash, distinct)
	for i := range hs {
		for j := range hs[i] {
			hs[i][j] = byte(r.UintN(256))
		}
	}
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	out := make([]schema.Observation, n)
	for i := range out {
		out[i] = schema.Observation{InfoHash: hs[r.IntN(distinct)], HashType: 1,
			ObservedAt: base + int64(r.IntN(86_400_000)), Source: schema.SourceGetPeers, RunID: "e2e"}
	}
	return out
}

func writeObs(t *testing.T, path string, obs []schema.Observation) string {
	t.Helper()
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
	return path
}

func arrowOf(t *testing.T, obs []schema.Observation) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, _ := rowio.Create[schema.Observation]("-", &buf)
	w.Write(obs)
	w.Close()
	return buf.Bytes()
}

const now = "2026-03-02T00:00:00Z"

// exportState renders the committed state as CSV (sorted by hash).
func exportState(t *testing.T, data string) string {
	t.Helper()
	r := runBin(t, nil, "export", "--data", data, "--format", "csv", "-o", "-")
	if r.code != 0 {
		t.Fatalf("export: %d %s", r.code, r.stderr)
	}
	return r.stdout
}

func TestFlagsAfterPositionals(t *testing.T) {
	dir := t.TempDir()
	in := writeObs(t, filepath.Join(dir, "o.parquet"), genObs(1, 3000, 800))
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if r := runBin(t, nil, "dedup", "--data", a, "--far-now", "--now", now, in); r.code != 0 {
		t.Fatalf("flags first: %d %s", r.code, r.stderr)
	}
	if r := runBin(t, nil, "dedup", in, "--far-now", "--now", now, "--data", b); r.code != 0 {
		t.Fatalf("flags after: %d %s", r.code, r.stderr)
	}
	if exportState(t, a) != exportState(t, b) {
		t.Fatal("flag order changed the result")
	}
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	good := writeObs(t, filepath.Join(dir, "o.parquet"), genObs(2, 100, 50))
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("xyz\n"), 0o644)
	if r := runBin(t, nil, "dedup", "--data", data, good); r.code != 0 {
		t.Fatalf("setup: %s", r.stderr)
	}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown flag", []string{"dedup", "--data", data, "--bogus", good}, 2, "dedup: unknown flag --bogus (infohash dedup --help lists them)"},
		{"no data", []string{"dedup", good}, 2, "--data"},
		{"bad now", []string{"dedup", "--data", data, "--now", "yesterday", good}, 2, "--now"},
		{"bad hex", []string{"dedup", "--data", data, bad}, 2, "bad.txt:1"},
		{"no input", []string{"dedup", "--data", data}, 2, "no input"},
		{"export bad format", []string{"export", "--data", data, "--format", "xml"}, 2, "--format"},
		{"export not a dataset", []string{"export", "--data", dir, "--format", "csv"}, 2, "not an infohash dataset"},
		{"unknown command", []string{"nope"}, 2, ""},
		{"unknown flag before the command", []string{"--bogus", "dedup"}, 2, "infohash: unknown flag --bogus (infohash --help lists them)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runBin(t, nil, tt.args...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d (stderr %q)", r.code, tt.code, r.stderr)
			}
			if !strings.Contains(r.stderr, tt.want) {
				t.Fatalf("stderr %q lacks %q", r.stderr, tt.want)
			}
			if tt.want != "" && strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Fatalf("error is not one line: %q", r.stderr)
			}
		})
	}
	t.Run("locked", func(t *testing.T) {
		f, err := os.OpenFile(filepath.Join(data, "LOCK"), os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			t.Fatal(err)
		}
		r := runBin(t, nil, "dedup", "--data", data, writeObs(t, filepath.Join(dir, "o2.parquet"), genObs(3, 10, 10)))
		if r.code != 75 || !strings.Contains(r.stderr, "locked") {
			t.Fatalf("exit %d stderr %q, want 75", r.code, r.stderr)
		}
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	})
}

func TestHelpListsExitStatusAndExamples(t *testing.T) {
	r := runBin(t, nil, "--help")
	for _, cmd := range []string{"dedup", "export"} {
		if !strings.Contains(r.stdout, cmd) {
			t.Fatalf("--help lacks %s", cmd)
		}
		h := runBin(t, nil, cmd, "--help")
		if h.code != 0 || !strings.Contains(h.stdout, "EXIT STATUS") || !strings.Contains(h.stdout, "infohash "+cmd) {
			t.Fatalf("%s --help: %d %q", cmd, h.code, h.stdout)
		}
	}
}

// Kill -9 dedup at random instants, many times; a clean re-run must then
// leave exactly the state of one uninterrupted run.
// TestKill9ThenRerunEqualsCleanRun kills dedup at random instants, with
// all inputs in one commit and with a commit per input (--batch-hashes 1:
// kills also land between commits), then re-runs it.
func TestKill9ThenRerunEqualsCleanRun(t *testing.T) {
	for _, batch := range []string{"0", "1"} {
		t.Run("batch-hashes "+batch, func(t *testing.T) { testKill9(t, batch) })
	}
}

func testKill9(t *testing.T, batchHashes string) {
	dir := t.TempDir()
	var inputs []string
	for i := 0; i < 3; i++ {
		inputs = append(inputs, writeObs(t, filepath.Join(dir, fmt.Sprintf("o%d.parquet", i)), genObs(uint64(10+i), 60000, 20000)))
	}
	stdin := arrowOf(t, genObs(20, 20000, 5000))
	args := func(data string) []string {
		return append([]string{"dedup", "--data", data, "--far-now", "--now", now, "--batch-hashes", batchHashes, "-"}, inputs...)
	}
	clean := filepath.Join(dir, "clean")
	if r := runBin(t, stdin, args(clean)...); r.code != 0 {
		t.Fatalf("clean run: %s", r.stderr)
	}
	want := exportState(t, clean)

	killed := filepath.Join(dir, "killed")
	rng := rand.New(rand.NewPCG(42, 42))
	kills := 0
	for i := 0; i < 12; i++ {
		cmd := exec.Command(bin, args(killed)...)
		cmd.Stdin = bytes.NewReader(stdin)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.IntN(1500)) * time.Millisecond)
		if cmd.Process.Signal(syscall.SIGKILL) == nil {
			kills++
		}
		cmd.Wait()
	}
	t.Logf("%d kills", kills)
	// The re-run brings the same stdin again: content identity makes the
	// spooled copies of killed runs and the new one count once.
	if r := runBin(t, stdin, args(killed)...); r.code != 0 {
		t.Fatalf("re-run: %s", r.stderr)
	}
	if got := exportState(t, killed); got != want {
		t.Fatalf("state after kills differs from a clean run (%d vs %d bytes)", len(got), len(want))
	}
	if files, _ := filepath.Glob(filepath.Join(killed, "ledger", "current", "*.parquet")); len(files) == 0 {
		t.Fatal("the ledger is in no ledger file")
	}
	// What a run killed while spooling had read is set aside as a
	// partial-* file, not applied (the re-run re-sent it). Where the file
	// system lacks O_TMPFILE, a run killed between creating its spool and
	// locking it leaves it empty, which Salvage leaves alone for a minute
	// (its writer may be about to lock it); a spool locked before it had
	// a name never lingers. Anything else in the inbox would be input
	// left unapplied.
	ents, _ := os.ReadDir(filepath.Join(killed, "inbox"))
	partials := 0
	for _, e := range ents {
		info, err := e.Info()
		switch {
		case strings.HasPrefix(e.Name(), "partial-"):
			partials++
		case strings.HasPrefix(e.Name(), ".tmp-") && !fsutil.LockedAtBirth(e.Name()) && err == nil && info.Size() == 0:
			t.Logf("an empty spool of a run killed before it locked it: %s", e.Name())
		default:
			t.Fatalf("inbox not drained: %s", e.Name())
		}
	}
	t.Logf("%d partial spools set aside", partials)
	// And once more: a no-op.
	if r := runBin(t, stdin, args(killed)...); r.code != 0 || exportState(t, killed) != want {
		t.Fatalf("second re-run changed the state: %s", r.stderr)
	}
}

// Two writers at once: each re-applies on the other's snapshot or waits
// for the lock; both inputs end up applied exactly once.
func TestConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	a := writeObs(t, filepath.Join(dir, "a.parquet"), genObs(30, 40000, 9000))
	b := writeObs(t, filepath.Join(dir, "b.parquet"), genObs(31, 40000, 9000))
	both := filepath.Join(dir, "both")
	if r := runBin(t, nil, "dedup", "--data", both, "--far-now", "--now", now, a, b); r.code != 0 {
		t.Fatal(r.stderr)
	}
	runBin(t, nil, "dedup", "--data", data, "--far-now", "--now", now, writeObs(t, filepath.Join(dir, "seed.parquet"), nil))
	runBin(t, nil, "dedup", "--data", both, "--far-now", "--now", now, filepath.Join(dir, "seed.parquet"))
	done := make(chan result, 2)
	for _, in := range []string{a, b} {
		go func(in string) {
			cmd := exec.Command(bin, "dedup", "--data", data, "--far-now", "--now", now, "--lock-wait", "60s", in)
			var errb bytes.Buffer
			cmd.Stderr = &errb
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			done <- result{stderr: errb.String(), code: code}
		}(in)
	}
	for i := 0; i < 2; i++ {
		r := <-done
		t.Logf("writer: %s", r.stderr)
		if r.code != 0 {
			t.Fatalf("writer failed: %d %s", r.code, r.stderr)
		}
	}
	// Order of application may differ; counts and times may not.
	got, want := exportState(t, data), exportState(t, both)
	t.Logf("got %d lines, want %d", strings.Count(got, "\n"), strings.Count(want, "\n"))
	if got != want {
		// activity is a float summed in a different order: compare the rest.
		if g, w := strip(got), strip(want); g != w {
			gl, wl := strings.Split(g, "\n"), strings.Split(w, "\n")
			for i := range gl {
				if i < len(wl) && gl[i] != wl[i] {
					t.Fatalf("concurrent writers lost or double-counted input: line %d\n got %s\nwant %s", i, gl[i], wl[i])
				}
			}
			t.Fatalf("concurrent writers: %d lines, want %d", len(gl), len(wl))
		}
	}
}

// strip drops the activity column (column 8) from a CSV export.
func strip(csv string) string {
	var b strings.Builder
	for _, line := range strings.Split(csv, "\n") {
		f := strings.Split(line, ",")
		if len(f) > 8 {
			f = append(f[:7], f[8:]...)
		}
		b.WriteString(strings.Join(f, ",") + "\n")
	}
	return b.String()
}

// TestKilledWhileReadingAPipe: dedup killed while its stdin (a crawler's
// pipe) is still open keeps what it had read: the next run sets the
// whole batches aside as inbox/partial-*.arrow (not applied, since a
// re-sent input would count twice), and applying that file brings them in.
func TestKilledWhileReadingAPipe(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "d")
	first, second := genObs(31, 500, 500), genObs(32, 500, 500)
	distinct := map[schema.Hash]bool{}
	for _, o := range append(append([]schema.Observation(nil), first...), second...) {
		distinct[o.InfoHash] = true
	}
	// Two whole batches, then the start of a third that never completes.
	var buf bytes.Buffer
	w, _ := rowio.Create[schema.Observation]("-", &buf)
	w.Write(first)
	w.Write(second)
	whole := buf.Len()
	w.Write(first)
	partial := buf.Bytes()[:whole+100]

	cmd := exec.Command(bin, "dedup", "--data", data, "--far-now", "--now", now, "-")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := stdin.Write(partial); err != nil {
		t.Fatal(err)
	}
	// Wait until the spool holds every byte sent, then kill.
	deadline := time.Now().Add(30 * time.Second)
	for {
		ents, _ := os.ReadDir(filepath.Join(data, "inbox"))
		size := int64(0)
		for _, e := range ents {
			if info, err := e.Info(); err == nil && strings.HasPrefix(e.Name(), ".tmp-") {
				size = info.Size()
			}
		}
		if size == int64(len(partial)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the spool never reached %d bytes (%d)", len(partial), size)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	other := writeObs(t, filepath.Join(dir, "other.parquet"), genObs(33, 100, 100))
	r := runBin(t, nil, "dedup", "--data", data, "--far-now", "--now", now, other)
	if r.code != 0 {
		t.Fatalf("next run: %d %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "partial-") {
		t.Fatalf("the next run did not say where the partial input went:\n%s", r.stderr)
	}
	ents, _ := os.ReadDir(filepath.Join(data, "inbox"))
	var set []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "partial-") && strings.HasSuffix(e.Name(), ".arrow") {
			set = append(set, filepath.Join(data, "inbox", e.Name()))
		}
	}
	if len(set) != 1 {
		t.Fatalf("inbox holds %v, want one partial-*.arrow", ents)
	}
	if r := runBin(t, nil, "status", "--data", data); r.code != 0 || !strings.Contains(r.stdout, set[0]) {
		t.Fatalf("status does not list the partial input %s:\n%s%s", set[0], r.stdout, r.stderr)
	}
	rows := func() int { return strings.Count(exportState(t, data), "\n") - 1 }
	before := rows()
	if r := runBin(t, nil, "dedup", "--data", data, "--far-now", "--now", now, set[0]); r.code != 0 {
		t.Fatalf("applying the partial input: %s", r.stderr)
	}
	if got, want := rows()-before, len(distinct); got != want {
		t.Fatalf("the partial input added %d hashes, want the %d of its two whole batches", got, want)
	}
}

// TestStatusVerifyFindsADamagedBloomFilter: `status --verify` checks the
// Bloom filters too, names the damaged file and exits 1; intact, it exits 0.
func TestStatusVerifyFindsADamagedBloomFilter(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	in := writeObs(t, filepath.Join(dir, "o.parquet"), genObs(4, 3000, 800))
	if r := runBin(t, nil, "dedup", "--data", data, "--far-now", "--now", now, in); r.code != 0 {
		t.Fatalf("dedup: %d %s", r.code, r.stderr)
	}
	if r := runBin(t, nil, "status", "--data", data, "--verify"); r.code != 0 || !strings.Contains(r.stdout, "all match") {
		t.Fatalf("intact: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	blooms, _ := filepath.Glob(filepath.Join(data, "state", "current", "_bloom", "*.bloom"))
	if len(blooms) == 0 {
		t.Fatal("no Bloom filters in the snapshot")
	}
	victim, err := filepath.EvalSymlinks(blooms[0])
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(victim)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 0x80
	if err := os.WriteFile(victim, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r := runBin(t, nil, "status", "--data", data, "--verify")
	if r.code != 1 || !strings.Contains(r.stdout, filepath.Base(victim)) || !strings.Contains(r.stderr, "files does not match the manifest") {
		t.Fatalf("damaged: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
