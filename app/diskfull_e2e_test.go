package app

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/krpc"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// onSmallTmpfs runs script with sh in a private mount namespace
// (unshare -m) where $MNT is a 4 MiB tmpfs holding a $FILL-byte filler
// file, so that what the script writes there meets a really full disk;
// $KEEP is outside it, for what the script copies out. It skips the test
// where mounting is not allowed (not root, no unshare).
func onSmallTmpfs(ctx context.Context, t *testing.T, fill int, script string, env ...string) (*exec.Cmd, *bytes.Buffer, string) {
	t.Helper()
	if out, err := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c",
		"mount -t tmpfs -o size=4k tmpfs /mnt").CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs in a private mount namespace (unshare -m needs root): %v: %s", err, out)
	}
	dir := t.TempDir()
	mnt, keep := filepath.Join(dir, "mnt"), filepath.Join(dir, "keep")
	for _, d := range []string{mnt, keep} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.CommandContext(ctx, "unshare", "-m", "--propagation", "private", "sh", "-c",
		`mount -t tmpfs -o size=4m tmpfs "$MNT" && head -c "$FILL" /dev/zero >"$MNT/filler" || exit 99
`+script+`
rc=$?; ls -A "$MNT" >"$KEEP/ls"; exit $rc`)
	cmd.Env = append(os.Environ(), append(env, "MNT="+mnt, "KEEP="+keep, "FILL="+strconv.Itoa(fill), "BIN="+infohashBinary(t))...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	return cmd, &stderr, keep
}

// flood sends get_peers queries for random infohashes to addr until ctx
// ends: each is an observation for the capture node listening there.
func flood(ctx context.Context, addr string) {
	conn, err := net.Dial("udp4", addr)
	if err != nil {
		return
	}
	defer conn.Close()
	id, ih := make([]byte, 20), make([]byte, 20)
	rand.Read(id)
	var b []byte
	for i := 0; ctx.Err() == nil; i++ {
		rand.Read(ih)
		b = krpc.AppendGetPeers(b[:0], []byte{byte(i), byte(i >> 8)}, id, ih)
		conn.Write(b)
		if i%200 == 0 {
			time.Sleep(2 * time.Millisecond)
		}
	}
}

// freeUDPPort returns a loopback UDP port free a moment ago.
func freeUDPPort(t *testing.T) string {
	t.Helper()
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().String()
}

// TestCaptureKeepsWhatFitsOnAFullDisk: capture -o FILE on a filesystem
// that fills up while it records stops at once, keeps the observations
// it had in a valid file (renamed into place, no temporary file left) and
// exits 3 with one line naming the file and the rows kept; on one without
// room even to start, it exits 1 before crawling and leaves nothing.
func TestCaptureKeepsWhatFitsOnAFullDisk(t *testing.T) {
	n := captureTestnet(t)
	boot := strings.Join(n.Truth().Bootstrap, ",")
	run := func(t *testing.T, fill int, duration string) (int, string, string, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		addr := freeUDPPort(t)
		cmd, stderr, keep := onSmallTmpfs(ctx, t, fill, `"$BIN" capture -o "$MNT/obs.parquet" --bootstrap "$BOOT" --dht-listen "$ADDR" \
	--duration "$DURATION" --dht-rate 100000 --dht-state "$KEEP/state" --stats-json "$KEEP/stats.json"
rc=$?; cp "$MNT/obs.parquet" "$KEEP/" 2>/dev/null; (exit $rc)`, "BOOT="+boot, "ADDR="+addr, "DURATION="+duration)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		fctx, stop := context.WithCancel(ctx)
		go flood(fctx, addr)
		start := time.Now()
		err := cmd.Wait()
		stop()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		ls, _ := os.ReadFile(filepath.Join(keep, "ls"))
		t.Logf("exit %d after %v", code, time.Since(start).Round(time.Millisecond))
		return code, strings.TrimSpace(stderr.String()), strings.TrimSpace(string(ls)), keep
	}

	t.Run("fills up", func(t *testing.T) {
		// 2 MiB free: without the reservations the observations of 20s
		// of flood do not fit, and the run fails at its end keeping none.
		code, stderr, ls, keep := run(t, 2<<20, "20s")
		lines := strings.Split(stderr, "\n")
		last := lines[len(lines)-1]
		m := regexp.MustCompile(`^infohash: capture: stopped early, no room left for more rows: \S+/obs\.parquet: reserving \d+ bytes: no space left on device; (\d+) observations kept in \S+/obs\.parquet$`).FindStringSubmatch(last)
		if code != 3 || m == nil {
			t.Fatalf("exit %d, last line %q; want exit 3 and one line naming the file, the full disk and the rows kept; stderr:\n%s", code, last, stderr)
		}
		if ls != "filler\nobs.parquet" {
			t.Errorf("the tmpfs holds %q, want the filler and obs.parquet only", ls)
		}
		r, err := rowio.Open[schema.Observation](filepath.Join(keep, "obs.parquet"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		rows, err := r.ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(len(rows)) != m[1] || len(rows) < 1000 {
			t.Fatalf("the file holds %d rows, the message says %s (want at least 1000)", len(rows), m[1])
		}
		// distinct_hashes counts the hashes kept, not the refused batch's.
		distinct := map[schema.Hash]bool{}
		for _, o := range rows {
			distinct[o.InfoHash] = true
		}
		var st struct {
			Distinct     int    `json:"distinct_hashes"`
			Observations int    `json:"observations_written"`
			StopReason   string `json:"stop_reason"`
		}
		if b, err := os.ReadFile(filepath.Join(keep, "stats.json")); err != nil || json.Unmarshal(b, &st) != nil {
			t.Fatalf("--stats-json: %v: %s", err, b)
		}
		if st.StopReason != "output_full" || st.Observations != len(rows) || st.Distinct != len(distinct) {
			t.Errorf("--stats-json: stop_reason %q, %d observations, %d distinct hashes; want output_full, %d, %d (the file's)",
				st.StopReason, st.Observations, st.Distinct, len(rows), len(distinct))
		}
	})
	t.Run("full at the start", func(t *testing.T) {
		code, stderr, ls, _ := run(t, 3<<20+512<<10, "20s")
		if code != 1 || strings.Count(stderr, "\n") != 0 || !strings.Contains(stderr, "no space left on device") ||
			!strings.Contains(stderr, "obs.parquet") || strings.Contains(stderr, "listening") {
			t.Fatalf("exit %d, stderr %q; want exit 1 and one line naming the file and the full disk, before listening", code, stderr)
		}
		if ls != "filler" {
			t.Errorf("the tmpfs holds %q, want the filler only", ls)
		}
	})
}
