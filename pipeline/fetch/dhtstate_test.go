package fetch

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/tools/testnet"
)

// dhtTestnet starts a 16-node loopback testnet with one announced torrent
// and returns it with that torrent's hash and seeder.
func dhtTestnet(t *testing.T) (*testnet.Net, [20]byte, string) {
	t.Helper()
	n, err := testnet.Start(context.Background(), testnet.Config{Nodes: 16, Seeders: 1, Torrents: 1, Seed: 3, SearchEvery: -1, Reannounce: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	tr := n.Torrents()[0]
	return n, tr.InfoHash, tr.Seeders[0]
}

// blackhole is a UDP socket on loopback that reads everything sent to it,
// counts the packets and never answers: a router or saved node that is
// gone.
func blackhole(t testing.TB) (addr string, packets *atomic.Int64) {
	t.Helper()
	conn, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	packets = new(atomic.Int64)
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := conn.ReadFrom(buf); err != nil {
				return
			}
			packets.Add(1)
		}
	}()
	return conn.LocalAddr().String(), packets
}

// firstPeers starts a fetcher with o, looks ih up and returns how long it
// took from the start to the first peers (want among them), with the
// fetcher (closed by the test's cleanup).
func firstPeers(t testing.TB, o Options, ih [20]byte, want string) (time.Duration, *Fetcher) {
	t.Helper()
	start := time.Now()
	f := newFetcher(t, o)
	lr := f.dht.lookup(context.Background(), ih)
	for {
		select {
		case addrs := <-lr.peers:
			for _, a := range addrs {
				if a == want {
					took := time.Since(start)
					go func() {
						for range lr.peers {
						}
					}()
					return took, f
				}
			}
			continue
		case <-lr.done:
		}
		t.Fatalf("lookup ended without %s (err %v, %d responses)", want, lr.err, lr.responses)
	}
}

// TestDHTStateWarmStart: a fetch with --dht-state saves its node ID and
// the nodes that answered it; the next run takes that ID and looks up
// from those nodes at once, without a packet to its bootstrap routers
// (here a black hole: bootstrapping through it would find nothing). It
// used to bootstrap through the routers on every run.
func TestDHTStateWarmStart(t *testing.T) {
	n, ih, seeder := dhtTestnet(t)
	dir := t.TempDir()
	o := testOptions()
	o.DHTState = dir
	o.Bootstrap = n.BootstrapAddrs()
	cold, f := firstPeers(t, o, ih, seeder)
	id := f.dht.s.ID()
	f.Close()
	st, ok, err := loadDHTState(dir)
	if err != nil || !ok || st.ID != id || len(st.Nodes) == 0 {
		t.Fatalf("saved state: %+v, %v, %v; want ID %x and nodes", st, ok, err, id)
	}
	for _, sn := range st.Nodes {
		if !strings.HasPrefix(sn.Addr.String(), "127.0.0.1:") {
			t.Errorf("saved node %v is not one of the testnet's", sn.Addr)
		}
	}

	router, packets := blackhole(t)
	o.Bootstrap = []string{router}
	warm, f := firstPeers(t, o, ih, seeder)
	if got := f.dht.s.ID(); got != id {
		t.Errorf("warm run's node ID %x, want the saved %x", got, id)
	}
	if p := packets.Load(); p != 0 {
		t.Errorf("warm run sent %d packets to the bootstrap router", p)
	}
	t.Logf("start to first lookup result: cold %v, warm %v (%d saved nodes)", cold, warm, len(st.Nodes))
	f.Close()

	// No routers at all (--bootstrap ""): the saved nodes still serve,
	// as they do for capture. fetch used to run without a DHT then, and
	// every job ended no_peers.
	o.Bootstrap, o.DHT = nil, true
	if _, f = firstPeers(t, o, ih, seeder); f.dht == nil {
		t.Fatal("no DHT node without routers, though the state is warm")
	}
	f.Close()
}

// TestDHTStateFallsBackToBootstrap: when no saved node answers, fetch
// bootstraps through --bootstrap and still finds peers, says so, and
// replaces the state with nodes that answered. The saved node's ping
// fails at once (the guard refuses it, as an unreachable network does),
// so that the query timeout need not be short: it was 1 s, both for the
// saved node's silence and for the testnet's answers, which a loaded
// machine can delay past it.
func TestDHTStateFallsBackToBootstrap(t *testing.T) {
	n, ih, seeder := dhtTestnet(t)
	dir := t.TempDir()
	gone, packets := blackhole(t)
	var id [20]byte
	id[0] = 0xab
	if err := saveDHTState(dir, id, []savedNode{{ID: [20]byte{1}, Addr: mustAddrPort(t, gone)}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	var pinged atomic.Int64
	o := testOptions()
	o.DHTState = dir
	o.Bootstrap = n.BootstrapAddrs()
	o.DHTQueryTimeout = backstop // the testnet answers: a slow machine only delays it
	o.guard = func(network, addr string) error {
		if network == "udp" && addr == gone {
			pinged.Add(1)
			return errors.New("network unreachable")
		}
		return nil
	}
	o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	_, f := firstPeers(t, o, ih, seeder)
	if pinged.Load() == 0 {
		t.Error("the saved node was not tried")
	}
	if p := packets.Load(); p != 0 {
		t.Errorf("%d packets reached the saved node past the guard", p)
	}
	if !strings.Contains(logs.String(), "no saved DHT node answered") {
		t.Errorf("no warning about the fallback:\n%s", logs.String())
	}
	f.Close()
	st, ok, err := loadDHTState(dir)
	if err != nil || !ok || st.ID != id || len(st.Nodes) == 0 {
		t.Fatalf("state after the fallback: %+v, %v, %v", st, ok, err)
	}
	for _, sn := range st.Nodes {
		if sn.Addr.String() == gone {
			t.Errorf("the silent node %s was saved again", gone)
		}
	}
}

// TestDHTStateKeptWhenNobodyAnswers: a run that heard no node at all
// (saved nodes and routers silent: the network was down) keeps the saved
// nodes for the next run instead of saving an empty table over them.
func TestDHTStateKeptWhenNobodyAnswers(t *testing.T) {
	dir := t.TempDir()
	gone, _ := blackhole(t)
	router, _ := blackhole(t)
	nodes := []savedNode{{ID: [20]byte{1}, Addr: mustAddrPort(t, gone)}}
	if err := saveDHTState(dir, [20]byte{0xab}, nodes, time.Now()); err != nil {
		t.Fatal(err)
	}
	o := testOptions()
	o.DHTState = dir
	o.Bootstrap = []string{router}
	o.DHTQueryTimeout = 300 * time.Millisecond
	newFetcher(t, o).Close()
	st, ok, err := loadDHTState(dir)
	if err != nil || !ok || len(st.Nodes) != 1 || st.Nodes[0] != nodes[0] {
		t.Fatalf("state after a run nobody answered: %+v, %v, %v; want the saved node kept", st, ok, err)
	}
}

// TestBootstrapLogSaysItOnce: a bootstrap no node answered is said once,
// as a warning (with the saved nodes tried), with no "DHT bootstrapped
// nodes=0" line before it; a bootstrap that found nodes says so.
func TestBootstrapLogSaysItOnce(t *testing.T) {
	n, _, _ := dhtTestnet(t)
	router, _ := blackhole(t)
	gone, _ := blackhole(t)
	for _, tt := range []struct {
		name      string
		bootstrap []string
		saved     bool
		want      []string
		not       []string
		answered  bool // the bootstrap gets answers
	}{
		{"nobody answered", []string{router}, false,
			[]string{"level=WARN msg=\"fetch: no DHT node answered the bootstrap", "saved_nodes=0"},
			[]string{"DHT bootstrapped", "no saved DHT node answered"}, false},
		{"nor the saved nodes", []string{router}, true,
			[]string{"level=WARN msg=\"fetch: no DHT node answered the bootstrap", "saved_nodes=1"},
			[]string{"DHT bootstrapped", "no saved DHT node answered"}, false},
		{"a real bootstrap", n.BootstrapAddrs(), false,
			[]string{"level=INFO msg=\"fetch: DHT bootstrapped\" nodes="},
			[]string{" nodes=0 ", "no DHT node answered", "level=WARN"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			o := testOptions()
			o.Bootstrap = tt.bootstrap
			// 300 ms is the wait for silent nodes' answers: they get none
			// however long the wait. The testnet's answers come, a loaded
			// machine only slows them: for them 300 ms was a speed claim
			// (nodes=0 on a slow machine), so they get the backstop.
			o.DHTQueryTimeout = 300 * time.Millisecond
			if tt.answered {
				o.DHTQueryTimeout = backstop
			}
			o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			if tt.saved {
				o.DHTState = t.TempDir()
				if err := saveDHTState(o.DHTState, [20]byte{0xab}, []savedNode{{ID: [20]byte{1}, Addr: mustAddrPort(t, gone)}}, time.Now()); err != nil {
					t.Fatal(err)
				}
			}
			newFetcher(t, o).Close()
			got := logs.String()
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("no %q in the logs:\n%s", w, got)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(got, w) {
					t.Errorf("%q in the logs:\n%s", w, got)
				}
			}
		})
	}
}

// TestDHTStateUnusable: a state file that is not fetch's (corrupt, or
// another program's) is named in a one-line warning and ignored: the run
// bootstraps and overwrites it with its own.
func TestDHTStateUnusable(t *testing.T) {
	n, ih, seeder := dhtTestnet(t)
	for _, tt := range []struct{ name, content, want string }{
		{"truncated", `{"kind": "infohash fetch DHT st`, "not JSON"},
		{"capture's", `{"version": 1, "nodes": [{"id": "00", "table": []}]}`, "not a fetch DHT state"},
		{"bad id", `{"kind": "infohash fetch DHT state", "version": 1, "id": "xyz", "nodes": []}`, "not 40 hex digits"},
		{"newer", `{"kind": "infohash fetch DHT state", "version": 2, "id": "` + strings.Repeat("ab", 20) + `"}`, "version 2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, stateFileName)
			if err := os.WriteFile(p, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			o := testOptions()
			o.DHTState = dir
			o.Bootstrap = n.BootstrapAddrs()
			o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			_, f := firstPeers(t, o, ih, seeder)
			f.Close()
			var warn string
			for _, l := range strings.Split(logs.String(), "\n") {
				if strings.Contains(l, "level=WARN") {
					warn += l + "\n"
				}
			}
			if strings.Count(warn, "\n") != 1 || !strings.Contains(warn, p) || !strings.Contains(warn, tt.want) {
				t.Errorf("warnings %q; want one naming %s and saying %q", warn, p, tt.want)
			}
			if _, ok, err := loadDHTState(dir); !ok || err != nil {
				t.Errorf("state not replaced: %v, %v", ok, err)
			}
		})
	}
}

// TestDHTStateInUse: a second fetch on a --dht-state in use is refused
// (exit 75, naming the directory) before it reads a job or creates its
// output, while capture's files in the same directory (its state and its
// lock, held) are no obstacle and are left alone.
func TestDHTStateInUse(t *testing.T) {
	dir := t.TempDir()
	captureState := filepath.Join(dir, "dht-state.json")
	if err := os.WriteFile(captureState, []byte(`{"version": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	holdCapture, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	defer holdCapture.Close()
	if err := unix.Flock(int(holdCapture.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	router, _ := blackhole(t)
	o := testOptions()
	o.DHTState = dir
	o.Bootstrap = []string{router}
	o.DHTQueryTimeout = 500 * time.Millisecond
	first := newFetcher(t, o)

	out := filepath.Join(t.TempDir(), "results.parquet")
	second := o
	second.Input, second.Output = "-", out
	second.Stdin = strings.NewReader(strings.Repeat("ab", 20) + "\n")
	_, err = Run(context.Background(), second)
	if exitcode.Of(err) != exitcode.Locked || !strings.Contains(err.Error(), "--dht-state "+dir+" is in use by another fetch (pid ") {
		t.Fatalf("second fetch: %v (exit %d), want exit 75 naming %s", err, exitcode.Of(err), dir)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the refused fetch created its output: %v", err)
	}
	first.Close()
	// Its router never answers: the job's lookup fails, and the run is
	// partial (TestSilentDHTIsPartial), not refused.
	if st, err := Run(context.Background(), second); exitcode.Of(err) != exitcode.Partial || st.Jobs != 1 {
		t.Fatalf("after the first closed: %v, %d jobs; want the job the refused run left unread", err, st.Jobs)
	}
	if b, err := os.ReadFile(captureState); err != nil || string(b) != `{"version": 1}` {
		t.Errorf("capture's state now %q, %v", b, err)
	}
	other, err := os.Open(filepath.Join(dir, "lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := unix.Flock(int(other.Fd()), unix.LOCK_EX|unix.LOCK_NB); err == nil {
		t.Error("capture's lock was lost")
	}
}

// TestDHTStateNeedsDHT: without a DHT node (no bootstrap) the state is
// neither locked nor written.
func TestDHTStateNeedsDHT(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "st")
	o := testOptions()
	o.DHTState = dir
	newFetcher(t, o).Close()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("--dht-state touched without a DHT: %v", err)
	}
}

func TestLoadDHTStateSkipsBadNodes(t *testing.T) {
	id := strings.Repeat("cd", 20)
	good := `{"id": "` + strings.Repeat("01", 20) + `", "addr": "127.0.0.1:7000"}`
	dir := t.TempDir()
	content := `{"kind": "infohash fetch DHT state", "version": 1, "id": "` + id + `", "nodes": [` +
		good + `, {"id": "01", "addr": "127.0.0.1:7001"}, {"id": "` + strings.Repeat("02", 20) + `", "addr": "nowhere"},` +
		`{"id": "` + strings.Repeat("03", 20) + `", "addr": "127.0.0.1:0"}]}`
	if err := os.WriteFile(filepath.Join(dir, stateFileName), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	st, ok, err := loadDHTState(dir)
	if err != nil || !ok || hex.EncodeToString(st.ID[:]) != id || len(st.Nodes) != 1 || st.Nodes[0].Addr.String() != "127.0.0.1:7000" {
		t.Fatalf("loaded %+v, %v, %v; want the one good node", st, ok, err)
	}
}

func mustAddrPort(t *testing.T, s string) netip.AddrPort {
	t.Helper()
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		t.Fatal(err)
	}
	return ap
}
