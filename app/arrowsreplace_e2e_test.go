package app

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/formats/fsutil/fsutiltest"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// TestArrowsReplaceRefusedKeepsFile: capture or fetch -o FILE.arrows
// --replace refused before its first batch (a --dht-state in use: 75;
// bad input: 2; a port in use: 1) leaves FILE as it was, its bytes and
// mode, and nothing beside it.
func TestArrowsReplaceRefusedKeepsFile(t *testing.T) {
	bin := infohashBinary(t)
	busy := filepath.Join(t.TempDir(), "state")
	busyAddr := freeUDPPort(t)
	fedCapture(t, bin, busyAddr, "--dht-state", busy, "--duration", "2m", "-o", filepath.Join(t.TempDir(), "a.arrows"))
	for _, tc := range []struct {
		name string
		code int
		args func(dir, out string) []string
	}{
		{"capture, --dht-state in use", 75, func(dir, out string) []string {
			return []string{"capture", "--bootstrap", "", "--dht-listen", "127.0.0.1:0", "--dht-state", busy, "-o", out, "--replace"}
		}},
		{"capture, --dht-listen in use", 1, func(dir, out string) []string {
			return []string{"capture", "--bootstrap", "", "--dht-listen", busyAddr, "--dht-state", filepath.Join(t.TempDir(), "s"), "-o", out, "--replace"}
		}},
		{"fetch, bad jobs", 2, func(dir, out string) []string {
			jobs := filepath.Join(t.TempDir(), "jobs.txt")
			if err := os.WriteFile(jobs, []byte("not a hash\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return []string{"fetch", "--no-dht", "--dht-listen", "127.0.0.1:0", jobs, "-o", out, "--replace"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "earlier.arrows")
			old := []byte("an earlier run's stream, not applied yet")
			if err := os.WriteFile(out, old, 0o640); err != nil {
				t.Fatal(err)
			}
			runBin(t, bin, tc.code, tc.args(dir, out)...)
			if b, err := os.ReadFile(out); err != nil || !bytes.Equal(b, old) {
				t.Errorf("%s after the refused run: %d bytes %.24q (%v), want it as it was: %q", out, len(b), b, err, old)
			}
			if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o640 {
				t.Errorf("%s after the refused run: %v (%v), want mode 0640", out, fi.Mode(), err)
			}
			if names := fsutiltest.Names(t, dir); !slices.Equal(names, []string{"earlier.arrows"}) {
				t.Errorf("the refused run left %q in %s", names, dir)
			}
		})
	}
}

// TestArrowsReplaceWritingNothing: a capture -o FILE.arrows --replace
// that goes through (exit 0) without a batch leaves in FILE what a run
// without --replace leaves in a new FILE, byte for byte: a valid stream
// of no rows (its schema, then its end); the old contents are gone.
func TestArrowsReplaceWritingNothing(t *testing.T) {
	bin := infohashBinary(t)
	dir := t.TempDir()
	fresh, replaced := filepath.Join(dir, "fresh.arrows"), filepath.Join(dir, "old.arrows")
	if err := os.WriteFile(replaced, bytes.Repeat([]byte("an earlier run's stream "), 1000), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, out := range [][]string{{fresh}, {replaced, "--replace"}} {
		runBin(t, bin, 0, append([]string{"capture", "--passive", "--bootstrap", "", "--dht-listen", "127.0.0.1:0",
			"--dht-state", filepath.Join(t.TempDir(), "s"), "--duration", "1ms", "-o"}, out...)...)
	}
	want, _ := os.ReadFile(fresh)
	got, err := os.ReadFile(replaced)
	if err != nil || len(want) == 0 || !bytes.Equal(got, want) {
		t.Fatalf("%s after --replace: %d bytes (%v); want the %d bytes a new FILE gets", replaced, len(got), err, len(want))
	}
	r, err := rowio.OpenArrow[schema.Observation](replaced, bytes.NewReader(got))
	if err != nil {
		t.Fatalf("%s after --replace: %v", replaced, err)
	}
	defer r.Close()
	if n, err := r.Read(make([]schema.Observation, 1)); n != 0 || !errors.Is(err, io.EOF) {
		t.Errorf("%s after --replace: read %d rows (%v), want none and its end", replaced, n, err)
	}
}

// TestCaptureArrowsReplaceAtFirstBatch: capture -o FILE.arrows --replace
// keeps FILE, locked, until its first batch, then FILE is the stream: a
// kill -9 before it leaves FILE as it was (the next writer sweeps the
// temporary file away), after it leaves the batches written, which dedup
// applies, as "-o - > FILE" does.
func TestCaptureArrowsReplaceAtFirstBatch(t *testing.T) {
	bin := infohashBinary(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "obs.arrows")
	old := []byte("an earlier run's stream")
	if err := os.WriteFile(out, old, 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeUDPPort(t)
	cmd, stderr := fedCapture(t, bin, addr, "--duration", "2m", "-o", out, "--replace")
	if who, busy := fsutil.Writing(out); !busy || !strings.HasPrefix(who, "infohash capture (pid ") {
		t.Fatalf("capture --replace does not hold %s's lock before its first batch (%q, %v)", out, who, busy)
	}
	if b, _ := os.ReadFile(out); !bytes.Equal(b, old) {
		t.Fatalf("%s before the first batch: %d bytes %.24q, want it as it was", out, len(b), b)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if b, _ := os.ReadFile(out); !bytes.Equal(b, old) {
		t.Fatalf("%s after a kill -9 before the first batch: %d bytes %.24q, want it as it was", out, len(b), b)
	}
	if names := fsutiltest.Names(t, dir); len(names) != 2 || !strings.HasPrefix(names[0], fsutil.TempPrefix+"obs.arrows-") {
		t.Fatalf("a kill -9 before the first batch left %q, want FILE and its temporary file", names)
	}
	addr = freeUDPPort(t)
	cmd, stderr = fedCapture(t, bin, addr, "--duration", "2m", "-o", out, "--replace")
	hashes := [][]byte{bytes.Repeat([]byte{1}, 20), bytes.Repeat([]byte{2}, 20)}
	sendGetPeers(t, addr, hashes)
	for end := time.Now().Add(time.Minute); wholeBatchRows(t, out) != len(hashes); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%s holds %d whole rows, want %d; stderr:\n%s", out, wholeBatchRows(t, out), len(hashes), stderr.String())
		}
	}
	if who, busy := fsutil.Writing(out); !busy || !strings.HasPrefix(who, "infohash capture (pid ") {
		t.Fatalf("capture --replace does not hold %s's lock after its first batch (%q, %v)", out, who, busy)
	}
	if names := fsutiltest.Names(t, dir); !slices.Equal(names, []string{"obs.arrows"}) {
		t.Errorf("after the first batch %s holds %q, want FILE alone (the dead run's temporary file swept)", dir, names)
	}
	cmd.Process.Kill()
	cmd.Wait()
	msg := runDedup(t, bin, filepath.Join(t.TempDir(), "ds"), out)
	if !strings.Contains(msg, fmt.Sprintf(" observations=%d ", len(hashes))) {
		t.Fatalf("dedup of the killed capture's %s did not apply its %d observations:\n%s", out, len(hashes), msg)
	}
}
