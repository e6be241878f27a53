package cron

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// A capture killed with SIGKILL (the OOM killer) mid-run loses only the
// rows it had not yet written: its output is an Arrow IPC stream that
// every batch reaches as it is written, and the next pass applies every
// whole batch of it, once. Killed mid-batch (the file cut inside its
// last message), the next pass applies the batches before the cut and
// is partial (exit 3); the pass after it marks the file applied. A file
// applied again changes nothing (the ledger keys it by its checksum).
func TestCrawlPassCaptureKilled(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cut      bool // cut the file inside its last batch, as a kill mid-write does
		wantNext int  // the next pass's exit status
	}{
		{"between batches", false, 0},
		{"mid-batch", true, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ds")
			p := startPass(t, data, "a1", "60s")
			addr := p.log.waitFor(t, regexp.MustCompile(`capture: listening.* addr=(\S+)`))
			obs := filepath.Join(data, "work", "a1", "observations.arrows")
			var sent []string
			for i := range 5 {
				h := fmt.Sprintf("%040x", 0xc0ffee00+i)
				getPeersFor(t, addr, h)
				sent = append(sent, h)
				waitInFile(t, obs, h) // a batch of its own
			}
			capture := child(t, p.cmd.Process.Pid)
			if err := syscall.Kill(capture, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			if got := p.wait(t); got != 1 || !strings.Contains(p.log.String(), "capture: killed by SIGKILL") {
				t.Fatalf("pass a1: exit %d, want 1 saying capture was killed; log:\n%s", got, p.log)
			}
			// The line that stops the pass says what becomes of the file.
			if !regexp.MustCompile(`capture: failed \(exit 1\): stopping; the next pass applies what it wrote, \S*work/a1/observations\.arrows\n`).
				MatchString(p.log.String()) {
				t.Errorf("pass a1's log does not say the next pass applies the observations:\n%s", p.log)
			}
			noJobNotice(t, p.log.String())
			if !exists(obs) || exists(obs+".applied") {
				t.Fatalf("a1 left no unapplied observations; log:\n%s", p.log)
			}
			want := sent
			if tc.cut {
				b, err := os.ReadFile(obs)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.Truncate(obs, int64(bytes.Index(b, mustUnhex(t, sent[4])))); err != nil {
					t.Fatal(err)
				}
				want = sent[:4]
			}

			log := runPass(t, data, "a2", "1s", tc.wantNext)
			counts := seenCounts(t, data)
			for _, h := range want {
				if counts[h] != "1" {
					t.Errorf("hash %s: seen_count %q after the next pass, want 1; log:\n%s", h, counts[h], log)
				}
			}
			if tc.cut && counts[sent[4]] != "" {
				t.Errorf("the cut batch's hash %s is in the state", sent[4])
			}
			if tc.cut {
				if exists(obs+".applied") || !strings.Contains(log, "cut mid-message after 4 complete rows, which were applied") {
					t.Fatalf("a2: want the cut file applied up to the cut and left for the next pass; log:\n%s", log)
				}
				log = runPass(t, data, "a3", "1s", 0)
			}
			if !exists(obs+".applied") || !applied(t, data, obs) {
				t.Fatalf("a1's observations are not marked applied; log:\n%s", log)
			}
			// Applied again (the marker lost): a no-op.
			if err := os.Remove(obs + ".applied"); err != nil {
				t.Fatal(err)
			}
			log = runPass(t, data, "a4", "1s", 0)
			counts = seenCounts(t, data)
			for _, h := range want {
				if counts[h] != "1" {
					t.Errorf("hash %s: seen_count %q after applying a1's file again, want 1; log:\n%s", h, counts[h], log)
				}
			}
		})
	}
}

// A fetch killed with SIGKILL mid-run loses only the results it had not
// yet written (fetch writes a batch at least every second): the next
// pass merges every result that reached its file, once, and the jobs
// whose results did not stay leased until lease_until.
func TestCrawlPassFetchKilled(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ds")
	seed := filepath.Join(t.TempDir(), "seed.txt")
	hexList(t, seed, hashes(1, 6)...)
	ih(t, "dedup", "--data", data, seed)
	// A peer that takes the connection and says nothing: each job runs
	// out its 1s --timeout, one at a time.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	fetchArgs := "FETCH_ARGS=--no-dht --peer " + ln.Addr().String() + " --timeout 1s --concurrency 1"
	p := startPass(t, data, "f1", "1s", "LIMIT=6", fetchArgs)
	res := filepath.Join(data, "work", "f1", "results.arrows")
	for end := time.Now().Add(time.Minute); len(resultsIn(t, res)) < 2; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("no 2 results in %s within a minute; log:\n%s", res, p.log)
		}
	}
	fetch := child(t, p.cmd.Process.Pid)
	if err := syscall.Kill(fetch, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if got := p.wait(t); got != 1 || !strings.Contains(p.log.String(), "fetch: killed by SIGKILL") {
		t.Fatalf("pass f1: exit %d, want 1 saying fetch was killed; log:\n%s", got, p.log)
	}
	// The line that stops the pass says what becomes of the results and
	// of the other jobs' leases.
	if !regexp.MustCompile(`fetch: failed \(exit 1\): stopping; the next pass applies what it wrote, \S*work/f1/results\.arrows; ` +
		`the jobs it did not finish stay leased until \d{4}-\d\d-\d\dT\S+Z, then are planned again\n`).MatchString(p.log.String()) {
		t.Errorf("pass f1's log does not say what becomes of the results and the leases:\n%s", p.log)
	}
	noJobNotice(t, p.log.String())
	got := resultsIn(t, res)
	if len(got) < 2 || len(got) >= 6 {
		t.Fatalf("%d results reached the file, want some but not all 6", len(got))
	}

	log := runPass(t, data, "f2", "1s", 0, "LIMIT=6", fetchArgs)
	attempts := stateColumn(t, data, "attempts")
	for _, h := range got {
		if attempts[h] != "1" {
			t.Errorf("hash %s: attempts %q after the next pass, want 1 (its result merged once); log:\n%s", h, attempts[h], log)
		}
	}
	if !exists(res+".applied") || !applied(t, data, res) {
		t.Fatalf("f1's results are not marked applied; log:\n%s", log)
	}
	if live := liveLeases(t, data); len(live) != 6-len(got) {
		t.Errorf("%d live leases, want the %d jobs whose results did not reach the file", len(live), 6-len(got))
	}
	if err := os.Remove(res + ".applied"); err != nil {
		t.Fatal(err)
	}
	log = runPass(t, data, "f3", "1s", 0, "LIMIT=0")
	attempts = stateColumn(t, data, "attempts")
	for _, h := range got {
		if attempts[h] != "1" {
			t.Errorf("hash %s: attempts %q after merging f1's file again, want 1; log:\n%s", h, attempts[h], log)
		}
	}
}

// getPeersFor asks capture's node at addr for the peers of hash (hex).
func getPeersFor(t *testing.T, addr, hash string) {
	t.Helper()
	msg := "d1:ad2:id20:" + strings.Repeat("\x01", 20) + "9:info_hash20:" + string(mustUnhex(t, hash)) + "e1:q9:get_peers1:t2:aa1:y1:qe"
	c, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 2048)
	// A minute bounds a capture that never answers (see getPeers).
	for end := time.Now().Add(time.Minute); time.Now().Before(end); {
		if _, err := c.Write([]byte(msg)); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		if _, err := c.Read(buf); err == nil {
			return
		}
	}
	t.Fatalf("capture at %s did not answer get_peers", addr)
}

func mustUnhex(t *testing.T, h string) []byte {
	t.Helper()
	var b []byte
	for i := 0; i+2 <= len(h); i += 2 {
		v, err := strconv.ParseUint(h[i:i+2], 16, 8)
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, byte(v))
	}
	return b
}

// waitInFile waits until the bytes of hash (hex) are in file.
func waitInFile(t *testing.T, file, hash string) {
	t.Helper()
	raw := mustUnhex(t, hash)
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(file); err == nil && bytes.Contains(b, raw) {
			return
		}
	}
	t.Fatalf("%s never reached %s", hash, file)
}

// resultsIn returns the hashes (hex) of the results in the whole batches
// of the Arrow stream in file, which its writer may still be writing.
func resultsIn(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil || len(b) == 0 {
		return nil
	}
	r, err := rowio.OpenArrow[schema.Result](file, bytes.NewReader(b))
	if err != nil {
		return nil // not even the schema yet
	}
	defer r.Close()
	var out []string
	buf := make([]schema.Result, 64)
	for {
		n, err := r.Read(buf)
		for _, res := range buf[:n] {
			out = append(out, fmt.Sprintf("%x", res.InfoHash))
		}
		if _, cut := rowio.AsCut(err); cut || errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
}

// seenCounts returns the state's seen_count by hash (hex).
func seenCounts(t *testing.T, data string) map[string]string {
	return stateColumn(t, data, "seen_count")
}

// stateColumn returns a column of the state by hash (hex).
func stateColumn(t *testing.T, data, col string) map[string]string {
	t.Helper()
	hashes, vals := column(t, data, "state", "info_hash"), column(t, data, "state", col)
	out := map[string]string{}
	for i, h := range hashes {
		out[h] = vals[i]
	}
	return out
}

// noJobNotice fails if log holds bash's own notice of a step killed by a
// signal ("crawl-pass.sh: line 334: 1234 Killed  \"$@\" > \"$out\""):
// the pass's line ("STEP: killed by SIGKILL ...") says it once.
func noJobNotice(t *testing.T, log string) {
	t.Helper()
	if m := regexp.MustCompile(`(?m)^.*\d+ Killed\s.*$`).FindString(log); m != "" {
		t.Errorf("the log holds bash's job notice %q besides the pass's line:\n%s", m, log)
	}
}
