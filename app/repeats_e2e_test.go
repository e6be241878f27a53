package app

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/krpc"
)

// TestRepeatedQueriesAreOneSighting runs the real binary on loopback: two
// senders each ask capture get_peers for one hash 10 times. By default a
// sender's repeats are answered but not recorded (repeats_dropped), so
// dedup counts one sighting a sender, not one a query: a single node no
// longer makes a hash as busy as it likes (seen_count, activity, which
// rank fetch's retries). --repeat-window 0 records every query, as
// capture did before.
func TestRepeatedQueriesAreOneSighting(t *testing.T) {
	bin := infohashBinary(t)
	const hash, perSender = "0123456789abcdef0123456789abcdef01234567", 10
	ih, _ := hex.DecodeString(hash)
	tests := []struct {
		name    string
		args    []string
		seen    int64 // observations, and the hash's seen_count
		dropped int64
	}{
		{"default window", nil, 2, 2 * (perSender - 1)},
		{"--repeat-window 0", []string{"--repeat-window", "0"}, 2 * perSender, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			addr := freeUDPPort(t)
			obs, stats := filepath.Join(dir, "obs.parquet"), filepath.Join(dir, "capture.json")
			cmd, stderr := fedCapture(t, bin, addr, append([]string{"--duration", "1m", "-o", obs, "--stats-json", stats}, tt.args...)...)
			askGetPeers(t, addr, ih, perSender)
			askGetPeers(t, addr, ih, perSender) // another socket: another sender on loopback
			cmd.Process.Signal(syscall.SIGINT)
			if code := exitCode(stderr.wait(cmd)); code != 130 {
				t.Fatalf("capture: exit %d, want 130; stderr:\n%s", code, stderr.String())
			}
			var cs struct {
				Queries  map[string]int64 `json:"queries_by_method"`
				Dropped  int64            `json:"repeats_dropped"`
				Evicted  *int64           `json:"repeat_window_evicted"`
				Observed int64            `json:"observations_written"`
			}
			readJSONFile(t, stats, &cs)
			if cs.Queries["get_peers"] != 2*perSender || cs.Dropped != tt.dropped || cs.Observed != tt.seen {
				t.Errorf("capture's stats: get_peers %d, repeats_dropped %d, observations %d; want %d, %d, %d",
					cs.Queries["get_peers"], cs.Dropped, cs.Observed, 2*perSender, tt.dropped, tt.seen)
			}
			if cs.Evicted == nil || *cs.Evicted != 0 {
				t.Errorf("capture's stats: repeat_window_evicted %v, want 0 (two keys)", cs.Evicted)
			}
			// The done line ends with observations=N output=OUT (capture.go's
			// help and the scripts read it there), after the recent set's
			// counts.
			if want := fmt.Sprintf(" repeat_window_evicted=0 repeats_dropped=%d observations=%d output=%s\n", tt.dropped, tt.seen, obs); !strings.Contains(stderr.String(), want) {
				t.Errorf("the done line does not end with %q:\n%s", want, stderr.String())
			}
			data := filepath.Join(dir, "data")
			runBin(t, bin, 0, "dedup", "--data", data, obs)
			if got := stateRow(t, bin, data, hash); got.SeenCount != tt.seen {
				t.Errorf("dedup of the capture: seen_count %d, want %d", got.SeenCount, tt.seen)
			}
		})
	}
}

// askGetPeers sends n get_peers for ih to the node at addr from one new
// socket, each after the reply to the one before: capture has handled
// them all when it returns.
func askGetPeers(t *testing.T, addr string, ih []byte, n int) {
	t.Helper()
	conn, err := net.Dial("udp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	id := bytes.Repeat([]byte{9}, 20)
	buf := make([]byte, 1<<16)
	for i := range n {
		tid := []byte{'r', byte(i)}
		if _, err := conn.Write(krpc.AppendGetPeers(nil, tid, id, ih)); err != nil {
			t.Fatal(err)
		}
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		for {
			nb, err := conn.Read(buf)
			if err != nil {
				t.Fatalf("get_peers %d of %d to %s: no reply: %v", i+1, n, addr, err)
			}
			var m krpc.Msg
			if krpc.Parse(buf[:nb], &m) == nil && m.Y == krpc.Response && bytes.Equal(m.T, tid) {
				break
			}
		}
	}
}

// TestForgedSendersAreCapped runs the real binary on loopback: 5 senders
// (sockets: each its own sender on loopback, as each forged source
// address is on the Internet) ask capture get_peers for one hash, under
// --max-sightings-per-hash 3: 3 are recorded and dedup counts seen_count
// 3, the other 2 are answered and counted in hash_cap_dropped (stats,
// done line, metrics). Without the cap, every sender was a sighting: a
// sender forging addresses made the hash as busy as it liked.
// --max-sightings-per-hash 0 records all 5.
func TestForgedSendersAreCapped(t *testing.T) {
	bin := infohashBinary(t)
	const hash, senders = "89abcdef0123456789abcdef0123456789abcdef", 5
	ih, _ := hex.DecodeString(hash)
	tests := []struct {
		name   string
		limit  string
		seen   int64
		capped int64
	}{
		{"a cap of 3", "3", 3, 2},
		{"no cap", "0", senders, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			addr := freeUDPPort(t)
			obs, stats, metrics := filepath.Join(dir, "obs.parquet"), filepath.Join(dir, "capture.json"), filepath.Join(dir, "capture.prom")
			cmd, stderr := fedCapture(t, bin, addr, "--duration", "1m", "-o", obs, "--stats-json", stats,
				"--metrics-file", metrics, "--max-sightings-per-hash", tt.limit)
			for range senders {
				askGetPeers(t, addr, ih, 1)
			}
			cmd.Process.Signal(syscall.SIGINT)
			if code := exitCode(stderr.wait(cmd)); code != 130 {
				t.Fatalf("capture: exit %d, want 130; stderr:\n%s", code, stderr.String())
			}
			var cs struct {
				Queries  map[string]int64 `json:"queries_by_method"`
				Capped   *int64           `json:"hash_cap_dropped"`
				Observed int64            `json:"observations_written"`
			}
			readJSONFile(t, stats, &cs)
			capped := "missing"
			if cs.Capped != nil {
				capped = fmt.Sprint(*cs.Capped)
			}
			if cs.Queries["get_peers"] != senders || capped != fmt.Sprint(tt.capped) || cs.Observed != tt.seen {
				t.Errorf("capture's stats: get_peers %d, hash_cap_dropped %s, observations %d; want %d, %d, %d",
					cs.Queries["get_peers"], capped, cs.Observed, senders, tt.capped, tt.seen)
			}
			if want := fmt.Sprintf(" hash_cap_evicted=0 hash_cap_dropped=%d repeat_window_evicted=0", tt.capped); !strings.Contains(stderr.String(), want) {
				t.Errorf("the done line lacks %q:\n%s", want, stderr.String())
			}
			b, _ := os.ReadFile(metrics)
			for _, want := range []string{fmt.Sprintf("\ninfohash_capture_hash_cap_dropped %d\n", tt.capped), "\ninfohash_capture_hash_cap_evicted 0\n"} {
				if !strings.Contains(string(b), want) {
					t.Errorf("--metrics-file lacks %q:\n%s", strings.TrimSpace(want), b)
				}
			}
			data := filepath.Join(dir, "data")
			runBin(t, bin, 0, "dedup", "--data", data, obs)
			if got := stateRow(t, bin, data, hash); got.SeenCount != tt.seen {
				t.Errorf("dedup of the capture: seen_count %d, want %d", got.SeenCount, tt.seen)
			}
		})
	}
}
