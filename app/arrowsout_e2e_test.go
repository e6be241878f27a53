package app

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/formats/krpc"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// arrowMagic begins an Arrow IPC stream (a continuation marker), as
// infohash writes one; a Parquet file begins with "PAR1".
var arrowMagic = []byte{0xff, 0xff, 0xff, 0xff}

// fedCapture starts capture on addr, passive and without bootstrap, with
// args added, and returns it once it listens; its stderr is in the
// buffer (complete once it has exited).
func fedCapture(t *testing.T, bin, addr string, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	if !slices.Contains(args, "--dht-state") {
		args = append(args, "--dht-state", filepath.Join(t.TempDir(), "state"))
	}
	cmd := exec.Command(bin, append([]string{"capture", "--bootstrap", "", "--passive", "--dht-listen", addr}, args...)...)
	pr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	buf := &syncBuffer{listening: make(chan struct{}), eof: make(chan struct{})}
	go func() {
		buf.copy(pr)
		close(buf.eof)
	}()
	select {
	case <-buf.listening:
	case <-time.After(time.Minute):
		t.Fatalf("capture does not listen; stderr:\n%s", buf.String())
	}
	return cmd, buf
}

// syncBuffer collects a process's stderr, noting when it logged that it
// listens.
type syncBuffer struct {
	mu        sync.Mutex
	b         bytes.Buffer
	listening chan struct{}
	done      bool
	eof       chan struct{} // closed once the pipe is read to its end
}

// wait returns how cmd, whose stderr s reads, exited, once s has read
// all of it: cmd.Wait closes the pipe, so called first it could drop the
// last lines (the interrupted line, once in CI).
func (s *syncBuffer) wait(cmd *exec.Cmd) error {
	<-s.eof
	return cmd.Wait()
}

func (s *syncBuffer) copy(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		s.mu.Lock()
		s.b.WriteString(sc.Text() + "\n")
		if !s.done && strings.Contains(sc.Text(), "capture: listening") {
			s.done = true
			close(s.listening)
		}
		s.mu.Unlock()
	}
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// sendGetPeers sends a get_peers query for each of hashes to addr, one
// by one.
func sendGetPeers(t *testing.T, addr string, hashes [][]byte) {
	t.Helper()
	conn, err := net.Dial("udp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	id := bytes.Repeat([]byte{7}, 20)
	for i, h := range hashes {
		if _, err := conn.Write(krpc.AppendGetPeers(nil, []byte{byte(i), byte(i >> 8)}, id, h)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond) // no flood: every query is taken
	}
}

// readOutRows reads the rows of T in path: an Arrow stream or a Parquet file,
// told apart by its first bytes.
func readOutRows[T any](t *testing.T, path string) (rows []T, arrow bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r *rowio.Reader[T]
	if arrow = bytes.HasPrefix(b, arrowMagic); arrow {
		r, err = rowio.OpenArrow[T](path, bytes.NewReader(b))
	} else {
		r, err = rowio.Open[T](path, nil)
	}
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer r.Close()
	if rows, err = r.ReadAll(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rows, arrow
}

// TestCaptureArrowsOutput: capture -o FILE.arrows (any case, .arrow too)
// writes an Arrow IPC stream into FILE, the rows -o FILE.parquet gets,
// which dedup applies (telling it apart by content); any other name is
// still Parquet.
func TestCaptureArrowsOutput(t *testing.T) {
	bin := infohashBinary(t)
	hashes := make([][]byte, 40)
	for i := range hashes {
		hashes[i] = bytes.Repeat([]byte{byte(i + 1)}, 20)
	}
	want := make([]string, len(hashes))
	for i, h := range hashes {
		want[i] = fmt.Sprintf("%x dht_get_peers", h)
	}
	slices.Sort(want)
	for _, tc := range []struct {
		name  string
		arrow bool
	}{
		{"obs.parquet", false}, {"obs", false}, {"obs.arrows.txt", false},
		{"obs.arrows", true}, {"OBS.Arrows", true}, {"obs.arrow", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out, addr := filepath.Join(dir, tc.name), freeUDPPort(t)
			cmd, stderr := fedCapture(t, bin, addr, "--max-observations", fmt.Sprint(len(hashes)), "--duration", "1m", "-o", out)
			sendGetPeers(t, addr, hashes)
			if code := exitCode(stderr.wait(cmd)); code != 0 {
				t.Fatalf("capture -o %s: exit %d; stderr:\n%s", tc.name, code, stderr.String())
			}
			if !strings.Contains(stderr.String(), " observations=40 output="+out+"\n") {
				t.Errorf("the summary does not name %s:\n%s", out, stderr.String())
			}
			rows, arrow := readOutRows[schema.Observation](t, out)
			if arrow != tc.arrow {
				t.Fatalf("capture -o %s wrote an Arrow stream: %v, want %v", tc.name, arrow, tc.arrow)
			}
			got := make([]string, len(rows))
			for i, r := range rows {
				got[i] = fmt.Sprintf("%x %s", r.InfoHash[:], r.Source)
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("capture -o %s holds %q, want %q", tc.name, got, want)
			}
			msg := runDedup(t, bin, filepath.Join(dir, "ds"), out)
			if !strings.Contains(msg, " inputs=1 ") || !strings.Contains(msg, " observations=40 ") {
				t.Fatalf("dedup of %s did not apply its 40 observations:\n%s", out, msg)
			}
		})
	}
}

// runDedup runs dedup of input into data, wanting exit 0, and returns
// its stderr.
func runDedup(t *testing.T, bin, data, input string) string {
	t.Helper()
	var stderr bytes.Buffer
	c := exec.Command(bin, "dedup", "--data", data, input)
	c.Stderr = &stderr
	if code := exitCode(c.Run()); code != 0 {
		t.Fatalf("dedup %s: exit %d; stderr:\n%s", input, code, stderr.String())
	}
	return stderr.String()
}

// TestFetchArrowsOutput: fetch -o FILE.arrows writes the results -o
// FILE.parquet gets as an Arrow stream, which merge applies.
func TestFetchArrowsOutput(t *testing.T) {
	bin := infohashBinary(t)
	dir := t.TempDir()
	jobs := filepath.Join(dir, "jobs.txt")
	if err := os.WriteFile(jobs, []byte(strings.Repeat("ab", 20)+"\n"+strings.Repeat("cd", 20)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "ds")
	runDedup(t, bin, data, jobs)
	results := map[bool][]string{}
	for _, name := range []string{"res.parquet", "res.arrows"} {
		out := filepath.Join(dir, name)
		// No peer source: each job is local_error, the same each run.
		runBin(t, bin, 0, "fetch", "--no-dht", "--dht-listen", "127.0.0.1:0", jobs, "-o", out)
		rows, arrow := readOutRows[schema.Result](t, out)
		if arrow != (name == "res.arrows") {
			t.Fatalf("fetch -o %s wrote an Arrow stream: %v", name, arrow)
		}
		for _, r := range rows {
			results[arrow] = append(results[arrow], fmt.Sprintf("%x %s %s", r.InfoHash[:], r.Outcome, r.Detail))
		}
		slices.Sort(results[arrow])
	}
	if len(results[true]) != 2 || !slices.Equal(results[true], results[false]) {
		t.Fatalf("fetch -o res.arrows holds %q, -o res.parquet %q", results[true], results[false])
	}
	var stderr bytes.Buffer
	c := exec.Command(bin, "merge", "--data", data, filepath.Join(dir, "res.arrows"))
	c.Stderr = &stderr
	if code := exitCode(c.Run()); code != 0 || !strings.Contains(stderr.String(), " inputs=1 ") ||
		!strings.Contains(stderr.String(), " results=2 ") {
		t.Fatalf("merge res.arrows: exit %d, want 0 applying its 2 results; stderr:\n%s", code, stderr.String())
	}
}

// TestPlanRetriesRefusesArrows: a jobs file is published after the leases
// are committed, which a stream written into FILE as it goes cannot keep:
// plan-retries -o FILE.arrows is refused (exit 2, one line) before DIR is
// opened; other names are written as before.
func TestPlanRetriesRefusesArrows(t *testing.T) {
	bin := infohashBinary(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	runDedup(t, bin, data, writeHexList(t, dir))
	for _, name := range []string{"jobs.arrows", "jobs.ARROW"} {
		out := filepath.Join(dir, name)
		msg := runBin(t, bin, 2, "plan-retries", "--data", data, "-o", out)
		if strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "infohash: plan-retries: -o "+out+": a jobs file is Parquet") {
			t.Errorf("plan-retries -o %s: stderr %q, want one line refusing it", name, msg)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("plan-retries -o %s left a file: %v", name, err)
		}
	}
	out := filepath.Join(dir, "jobs")
	runBin(t, bin, 0, "plan-retries", "--data", data, "-o", out)
	if rows, arrow := readOutRows[schema.Job](t, out); arrow || len(rows) != 1 {
		t.Fatalf("plan-retries -o jobs: %d jobs, Arrow %v; want 1 in a Parquet file", len(rows), arrow)
	}
}

// TestCaptureArrowsLockAndReplace: capture -o FILE.arrows holds FILE's
// lock while it writes, as "-o - > FILE" does: dedup skips it (exit 3),
// and a second capture to it exits 75, with or without --replace, leaving
// the stream whole. An existing FILE is refused (exit 2) unless
// --replace, which writes a new stream over it.
func TestCaptureArrowsLockAndReplace(t *testing.T) {
	bin := infohashBinary(t)
	dir := t.TempDir()
	out, addr := filepath.Join(dir, "obs.arrows"), freeUDPPort(t)
	cmd, stderr := fedCapture(t, bin, addr, "--duration", "2m", "-o", out)
	sendGetPeers(t, addr, [][]byte{bytes.Repeat([]byte{1}, 20)})
	if who, busy := fsutil.Writing(out); !busy || !strings.HasPrefix(who, "infohash capture (pid ") {
		t.Fatalf("capture -o %s does not hold its lock (%q, %v); stderr:\n%s", out, who, busy, stderr.String())
	}
	msg := runBin(t, bin, 3, "dedup", "--data", filepath.Join(dir, "ds"), out)
	if !strings.Contains(msg, "still being written by infohash capture") {
		t.Errorf("dedup of the file being written: %s", msg)
	}
	for _, replace := range []string{"--passive", "--replace"} {
		msg := runBin(t, bin, 75, "capture", "--bootstrap", "", "--dht-listen", "127.0.0.1:0", "--duration", "1s",
			"--dht-state", filepath.Join(dir, "state2"), replace, "-o", out)
		if !strings.Contains(msg, "another process holds its lock (infohash capture (pid ") {
			t.Errorf("a second capture %s into %s: %s", replace, out, msg)
		}
	}
	sendGetPeers(t, addr, [][]byte{bytes.Repeat([]byte{2}, 20)})
	cmd.Process.Signal(os.Interrupt)
	if code := exitCode(stderr.wait(cmd)); code != 130 {
		t.Fatalf("capture after SIGINT: exit %d, want 130; stderr:\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "capture: interrupted; 2 observations written to "+out+"\n") {
		t.Errorf("the interrupted capture's last line does not say where its observations are:\n%s", stderr.String())
	}
	if rows, _ := readOutRows[schema.Observation](t, out); len(rows) != 2 {
		t.Fatalf("%s holds %d observations after the second writers, want 2", out, len(rows))
	}
	args := []string{"capture", "--bootstrap", "", "--dht-listen", "127.0.0.1:0", "--duration", "1s",
		"--dht-state", filepath.Join(dir, "state3"), "-o", out}
	if msg := runBin(t, bin, 2, args...); !strings.Contains(msg, "capture: -o "+out+" exists: give --replace") {
		t.Errorf("capture -o an existing %s: %s", out, msg)
	}
	runBin(t, bin, 0, append(args, "--replace")...)
	if rows, arrow := readOutRows[schema.Observation](t, out); !arrow || len(rows) != 0 {
		t.Fatalf("--replace left %d observations in %s (Arrow: %v), want a new empty stream", len(rows), out, arrow)
	}
}

// TestCaptureArrowsKilled: a kill -9 of capture -o FILE.arrows leaves
// FILE with the batches written so far, whose whole batches dedup
// applies, as "-o - > FILE" does.
func TestCaptureArrowsKilled(t *testing.T) {
	bin := infohashBinary(t)
	dir := t.TempDir()
	out, addr := filepath.Join(dir, "obs.arrows"), freeUDPPort(t)
	cmd, stderr := fedCapture(t, bin, addr, "--duration", "2m", "-o", out)
	hashes := make([][]byte, 300)
	for i := range hashes {
		hashes[i] = bytes.Repeat([]byte{byte(i), byte(i >> 8)}, 10)
	}
	sendGetPeers(t, addr, hashes)
	// Wait for the batches to reach the file (each within 200ms).
	for end := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if rows := wholeBatchRows(t, out); rows == len(hashes) {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("%s holds %d whole rows, want %d; stderr:\n%s", out, wholeBatchRows(t, out), len(hashes), stderr.String())
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	msg := runDedup(t, bin, filepath.Join(dir, "ds"), out)
	if !strings.Contains(msg, fmt.Sprintf(" observations=%d ", len(hashes))) || !strings.Contains(msg, fmt.Sprintf(" new=%d ", len(hashes))) {
		t.Fatalf("dedup of the killed capture's %s did not apply its %d observations:\n%s", out, len(hashes), msg)
	}
}

// wholeBatchRows counts the rows of the whole record batches of the
// Arrow stream at path (one still being written ends the count).
func wholeBatchRows(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return 0
	}
	r, err := rowio.OpenArrow[schema.Observation](path, bytes.NewReader(b))
	if err != nil {
		return 0
	}
	defer r.Close()
	n := 0
	buf := make([]schema.Observation, 64)
	for {
		k, err := r.Read(buf)
		n += k
		if err != nil {
			return n
		}
	}
}

// TestCaptureArrowsNothingWritten: a capture -o FILE.arrows that ends
// before writing anything (its --dht-state in use: exit 75) leaves no
// FILE, which the next run would refuse as existing.
func TestCaptureArrowsNothingWritten(t *testing.T) {
	bin := infohashBinary(t)
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	fedCapture(t, bin, freeUDPPort(t), "--dht-state", state, "--duration", "2m", "-o", filepath.Join(dir, "a.arrows"))
	out := filepath.Join(dir, "b.arrows")
	runBin(t, bin, 75, "capture", "--bootstrap", "", "--dht-listen", "127.0.0.1:0", "--dht-state", state, "-o", out)
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("capture that wrote nothing left %s: %v", out, err)
	}
}

// TestCaptureArrowsFullDisk: an Arrow stream written into a file (-o
// FILE.arrows, or -o - > FILE) reserves its disk space ahead of its
// batches as a Parquet -o FILE does: on a disk that fills up, capture
// stops, ends the stream after the batches that fit and exits 3 with one
// line naming the file and the rows kept; dedup applies them all, the
// stream whole (no batch cut mid-message, exit 0).
func TestCaptureArrowsFullDisk(t *testing.T) {
	bin := infohashBinary(t)
	for _, tc := range []struct{ name, redirect, where string }{
		{"-o FILE.arrows", `-o "$MNT/obs.arrows"`, `\S+/obs\.arrows`},
		{"-o - > FILE", `-o - >"$MNT/obs.arrows"`, `stdout`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			addr := freeUDPPort(t)
			// 2 MiB free: 20s of flood do not fit.
			cmd, stderr, keep := onSmallTmpfs(ctx, t, 2<<20, `"$BIN" capture `+tc.redirect+` --bootstrap "" --passive \
	--dht-listen "$ADDR" --duration 20s --dht-state "$KEEP/state"
rc=$?; cp "$MNT/obs.arrows" "$KEEP/" 2>/dev/null; (exit $rc)`, "ADDR="+addr)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			fctx, stop := context.WithCancel(ctx)
			go flood(fctx, addr)
			code := exitCode(cmd.Wait())
			stop()
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			last := lines[len(lines)-1]
			m := regexp.MustCompile(`^infohash: capture: stopped early, no room left for more rows: ` + tc.where +
				`: reserving \d+ bytes: no space left on device; (\d+) observations kept in ` + tc.where + `$`).FindStringSubmatch(last)
			if code != 3 || m == nil {
				t.Fatalf("exit %d, last line %q; want exit 3 and one line naming the full disk and the rows kept; stderr:\n%s", code, last, stderr)
			}
			out := filepath.Join(keep, "obs.arrows")
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			r, err := rowio.OpenArrow[schema.Observation](out, bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			r.RequireEndMarker()
			rows, err := r.ReadAll()
			if err != nil {
				t.Fatalf("%s is not a whole Arrow stream: %v", out, err)
			}
			if fmt.Sprint(len(rows)) != m[1] || len(rows) < 1000 {
				t.Fatalf("the file holds %d rows, the message says %s (want at least 1000)", len(rows), m[1])
			}
			if msg := runDedup(t, bin, filepath.Join(t.TempDir(), "ds"), out); !strings.Contains(msg, " observations="+m[1]+" ") {
				t.Fatalf("dedup did not apply the %s observations kept:\n%s", m[1], msg)
			}
		})
	}
}

// TestFetchArrowsFullDisk: fetch -o FILE.arrows on a disk that fills up
// stops as a Parquet -o FILE does: exit 3, one line naming FILE and the
// rows kept, the stream ended after them.
func TestFetchArrowsFullDisk(t *testing.T) {
	dir := t.TempDir()
	var list strings.Builder
	for i := range 60000 { // local_error results: ~250 bytes each
		fmt.Fprintf(&list, "%040x\n", i+1)
	}
	jobs := filepath.Join(dir, "jobs.txt")
	if err := os.WriteFile(jobs, []byte(list.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd, stderr, keep := onSmallTmpfs(ctx, t, 2200000, `"$BIN" fetch --no-dht --dht-listen 127.0.0.1:0 "$JOBS" -o "$MNT/res.arrows"
rc=$?; cp "$MNT/res.arrows" "$KEEP/" 2>/dev/null; (exit $rc)`, "JOBS="+jobs)
	code := exitCode(cmd.Run())
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	last := lines[len(lines)-1]
	m := regexp.MustCompile(`^infohash: fetch: stopped early, no room left for more rows: \S+/res\.arrows: reserving \d+ bytes: ` +
		`no space left on device; (\d+) rows? kept in \S+/res\.arrows; \d+ jobs? attempted, `).FindStringSubmatch(last)
	if code != 3 || m == nil {
		t.Fatalf("exit %d, last line %q; want exit 3 and one line naming the full disk and the rows kept", code, last)
	}
	out := filepath.Join(keep, "res.arrows")
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	r, err := rowio.OpenArrow[schema.Result](out, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	r.RequireEndMarker()
	rows, err := r.ReadAll()
	if err != nil || fmt.Sprint(len(rows)) != m[1] || len(rows) < 1000 {
		t.Fatalf("%s: %d rows (%v), the message says %s (want a whole stream of at least 1000)", out, len(rows), err, m[1])
	}
}
