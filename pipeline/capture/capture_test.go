package capture

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/bencode"
	"github.com/infohash/infohash/formats/krpc"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/tools/testnet"
)

// memSink keeps observations in memory.
type memSink struct {
	mu   sync.Mutex
	rows []schema.Observation
}

func (s *memSink) Write(rows []schema.Observation) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rows = append(s.rows, rows...)
	return nil
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func startTestnet(t *testing.T, cfg testnet.Config) *testnet.Net {
	t.Helper()
	// Start's context is the testnet's lifetime, not a start-up budget:
	// a 30 s timeout here stopped its searchers mid-test, or failed a
	// start slowed by load.
	n, err := testnet.Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

func testOptions() Options {
	o := DefaultOptions()
	o.Listen = "127.0.0.1:0"
	o.Bootstrap = nil
	o.MaxRPS = 0
	o.Progress = 0
	o.Logger = quiet()
	o.RunID = "test"
	return o
}

// runAsync starts Run and returns the node addresses and a wait func.
func runAsync(t *testing.T, ctx context.Context, o Options, sink Sink) ([]string, func() (Stats, error)) {
	t.Helper()
	ready := make(chan []string, 1)
	o.Ready = func(a []string) { ready <- a }
	var (
		st  Stats
		err error
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		st, err = Run(ctx, o, sink)
	}()
	select {
	case a := <-ready:
		return a, func() (Stats, error) { <-done; return st, err }
	case <-done:
		t.Fatalf("Run ended before listening: %v", err)
	}
	return nil, nil
}

// runUntilFound runs capture into sink until its samples hold 95% of the
// announced hashes (hangGuard bounds the wait), not for a fixed time: a
// loaded machine may crawl slower, not worse.
func runUntilFound(t *testing.T, o Options, truth testnet.Truth, sink *memSink) Stats {
	t.Helper()
	foundShare := func() float64 {
		sink.mu.Lock()
		defer sink.mu.Unlock()
		found := map[string]bool{}
		for _, r := range sink.rows {
			if r.Source == schema.SourceSampleInfohashes {
				found[fmt.Sprintf("%x", r.InfoHash)] = true
			}
		}
		n := 0
		for _, e := range truth.Announced {
			if found[e.InfoHash] {
				n++
			}
		}
		return float64(n) / float64(len(truth.Announced))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, wait := runAsync(t, ctx, o, sink)
	waitFor(t, "95% of the announced hashes in samples", func() bool { return foundShare() >= 0.95 })
	cancel()
	st, err := wait()
	if err != nil && st.StopReason != StopInterrupted {
		t.Fatal(err)
	}
	return st
}

func TestCaptureFindsAnnouncedHashesOnTestnet(t *testing.T) {
	net := startTestnet(t, testnet.Config{Seed: 42, Nodes: 16, Torrents: 40, Dead: 4, Searched: 4})
	truth := net.Truth()
	o := testOptions()
	o.Bootstrap = truth.Bootstrap
	o.NodeIDs = 2
	o.MaxRPS = 200
	sink := &memSink{}
	st := runUntilFound(t, o, truth, sink)
	had := truth.AllHashes()
	ours := map[string]bool{}
	for _, a := range truth.Bootstrap {
		ours[a] = true
	}
	found := map[string]bool{}
	for _, r := range sink.rows {
		h := fmt.Sprintf("%x", r.InfoHash)
		if r.Source == schema.SourceSampleInfohashes {
			// A node of another test's DHT on this host (one that kept a
			// contact whose port a testnet node now holds) can join the
			// crawl: its samples are real, only not the testnet's.
			if !had[h] && ours[r.NodeAddr] {
				t.Errorf("sample_infohashes gave %s from testnet node %s, which never had it", h, r.NodeAddr)
			}
			if len(r.NodeID) != 20 || r.NodeAddr == "" || r.RunID != "test" || r.ObservedAt == 0 {
				t.Errorf("incomplete observation %+v", r)
			}
		}
		found[h] = true
	}
	missing := 0
	for _, e := range truth.Announced {
		if !found[e.InfoHash] {
			missing++
		}
	}
	if got := float64(len(truth.Announced)-missing) / float64(len(truth.Announced)); got < 0.95 {
		t.Errorf("found %.0f%% of announced hashes, want >= 95%% (stats %+v)", 100*got, st)
	}
	if st.SampleResponses == 0 || st.Samples == 0 || st.Observations != int64(len(sink.rows)) || st.StopReason != StopInterrupted {
		t.Errorf("stats do not add up: %+v, %d rows", st, len(sink.rows))
	}
	t.Logf("stats: %+v", st)
}

// TestDurationEndsTheRun: a run with a --duration ends by itself and says
// so in its stop reason.
func TestDurationEndsTheRun(t *testing.T) {
	o := testOptions()
	o.Crawl = false
	o.Duration = 50 * time.Millisecond
	st, err := Run(context.Background(), o, &memSink{})
	if err != nil || st.StopReason != StopDuration {
		t.Fatalf("stop reason %q, error %v; want %q and none", st.StopReason, err, StopDuration)
	}
}

// send writes packets to addr from a fresh socket and returns the socket
// for reading replies.
func sendAll(t *testing.T, addr string, packets ...[]byte) *net.UDPConn {
	t.Helper()
	ua, _ := net.ResolveUDPAddr("udp4", addr)
	c, err := net.DialUDP("udp4", nil, ua)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetReadBuffer(4 << 20)
	for _, p := range packets {
		if _, err := c.Write(p); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// hangGuard bounds a test's wait for something that must happen: a reply
// on loopback (none is lost there), a sample, a query. A loaded machine or
// -race may take its time, so it only ends a test whose code hangs and
// says nothing about speed (5 s read deadlines here were speed claims).
const hangGuard = time.Minute

// replies reads n replies (or fails after hangGuard).
func replies(t *testing.T, c *net.UDPConn, n int) []krpc.Msg {
	t.Helper()
	var out []krpc.Msg
	buf := make([]byte, 1<<16)
	c.SetReadDeadline(time.Now().Add(hangGuard))
	for len(out) < n {
		nb, err := c.Read(buf)
		if err != nil {
			t.Fatalf("after %d of %d replies: %v", len(out), n, err)
		}
		var m krpc.Msg
		if err := krpc.Parse(append([]byte(nil), buf[:nb]...), &m); err != nil {
			t.Fatalf("bad reply %q: %v", buf[:nb], err)
		}
		if m.Y == krpc.Query {
			continue // the node's own queries to a contact it just learned are not replies
		}
		out = append(out, m)
	}
	return out
}

var peerID = []byte("PEER-ID-0123456789ab")

func hashN(i int) []byte { return []byte(fmt.Sprintf("hash-%015d", i)) }

func TestMalformedPacketsAreCountedAndSurvived(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := testOptions()
	o.Crawl = false
	sink := &memSink{}
	addrs, wait := runAsync(t, ctx, o, sink)
	bad := [][]byte{
		nil, []byte("x"), []byte("d"), []byte("de"), []byte("d1:t2:aa1:y1:qe"),
		[]byte("d1:ad2:id3:abce1:q9:get_peers1:t2:aa1:y1:qe"),
		[]byte("d1:ad2:id20:abcdefghij0123456789e1:q9:get_peers1:t2:aa1:y1:qe"), // no info_hash
		[]byte("l" + string(make([]byte, 3000)) + "e"),
		[]byte("d1:t2:aa1:y1:q1:q4:pingi1e"),
	}
	good := [][]byte{
		krpc.AppendGetPeers(nil, []byte("g1"), peerID, hashN(1)),
		krpc.AppendPing(nil, []byte("p1"), peerID),
		krpc.AppendFindNode(nil, []byte("f1"), peerID, hashN(2)),
		krpc.AppendSampleInfohashes(nil, []byte("s1"), peerID, hashN(3)),
		krpc.AppendQuery(nil, []byte("u1"), "vote", func(e *bencode.Encoder) { e.Str("id").Bytes(peerID) }),
	}
	c := sendAll(t, addrs[0], append(bad, good...)...)
	// Replies: error 203 for the three bad queries (no method, a short id,
	// no info_hash: all with t "aa"), then the good ones.
	got := replies(t, c, 3+len(good))
	byT := map[string]krpc.Msg{}
	errs := 0
	for _, m := range got {
		byT[string(m.T)] = m
		if string(m.T) == "aa" && m.Y == krpc.Error && m.ErrCode == krpc.ErrProtocol {
			errs++
		}
	}
	if errs != 3 {
		t.Errorf("%d error 203 replies to the bad queries, want 3", errs)
	}
	if m := byT["g1"]; m.Y != krpc.Response || len(m.Token) == 0 || string(m.ID) == "" {
		t.Errorf("get_peers reply %+v", m)
	}
	if m := byT["s1"]; !m.HasSamples || len(m.Samples) != 0 || m.Num != 0 {
		t.Errorf("sample_infohashes reply %+v, want empty samples: a get_peers target is not stored", m)
	}
	if m := byT["u1"]; m.Y != krpc.Error || m.ErrCode != krpc.ErrMethodUnknown {
		t.Errorf("unknown method reply %+v", m)
	}
	cancel()
	st, err := wait()
	if err == nil {
		t.Fatal("cancelled run returned no error")
	}
	if st.Malformed != int64(len(bad)) {
		t.Errorf("malformed = %d, want %d", st.Malformed, len(bad))
	}
	if st.PacketsIn != int64(len(bad)+len(good)) || st.Queries["get_peers"] != 2 || st.Queries["other"] != 1 {
		t.Errorf("stats %+v", st)
	}
	if len(sink.rows) != 1 || string(sink.rows[0].InfoHash[:]) != string(hashN(1)) || sink.rows[0].Source != schema.SourceGetPeers {
		t.Errorf("rows %+v, want the one valid get_peers", sink.rows)
	}
}

func TestAnnouncePeerNeedsTokenAndRecordsPort(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := testOptions()
	o.Crawl = false
	sink := &memSink{}
	addrs, wait := runAsync(t, ctx, o, sink)
	c := sendAll(t, addrs[0], krpc.AppendGetPeers(nil, []byte("g1"), peerID, hashN(7)))
	tok := replies(t, c, 1)[0].Token
	tok = append([]byte(nil), tok...)
	implied := krpc.AppendQuery(nil, []byte("a3"), "announce_peer", func(e *bencode.Encoder) {
		e.Str("id").Bytes(peerID).Str("implied_port").Int(1).Str("info_hash").Bytes(hashN(9)).
			Str("port").Int(1).Str("token").Bytes(tok)
	})
	for _, p := range [][]byte{
		krpc.AppendAnnouncePeer(nil, []byte("a1"), peerID, hashN(7), 51413, tok),
		krpc.AppendAnnouncePeer(nil, []byte("a2"), peerID, hashN(8), 51413, []byte("forged!!")),
		implied,
	} {
		c.Write(p)
	}
	got := replies(t, c, 3)
	c.Write(krpc.AppendSampleInfohashes(nil, []byte("s1"), peerID, hashN(0)))
	got = append(got, replies(t, c, 1)...)
	cancel()
	st, _ := wait()
	byT := map[string]krpc.Msg{}
	for _, m := range got {
		byT[string(m.T)] = m
	}
	if byT["a1"].Y != krpc.Response || byT["a2"].Y != krpc.Error || byT["a3"].Y != krpc.Response {
		t.Fatalf("replies %+v", byT)
	}
	if s := byT["s1"]; s.Num != 2 || len(s.Samples) != 40 || !bytes.Contains(s.Samples, hashN(7)) || !bytes.Contains(s.Samples, hashN(9)) {
		t.Errorf("sample_infohashes after two announces: %+v", s)
	}
	if st.BadTokens != 1 {
		t.Errorf("bad tokens = %d, want 1", st.BadTokens)
	}
	ports := map[string]int32{}
	for _, r := range sink.rows {
		if r.Source == schema.SourceAnnouncePeer {
			ports[string(r.InfoHash[:])] = r.PeerPort
		}
	}
	local := c.LocalAddr().(*net.UDPAddr).Port
	if len(ports) != 2 || ports[string(hashN(7))] != 51413 || ports[string(hashN(9))] != int32(local) {
		t.Errorf("announce observations %v, want 51413 and implied %d", ports, local)
	}
}

// TestInterruptKeepsEveryObservation cancels a run (what SIGINT does)
// right after the node has answered N queries, and reads the Parquet file
// back: all N must be there.
func TestInterruptKeepsEveryObservation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	path := filepath.Join(t.TempDir(), "obs.parquet")
	w, err := rowio.Create[schema.Observation](path, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := testOptions()
	o.Crawl = false
	o.BatchSize = 1000 // larger than N: everything sits in the batch at cancel time
	addrs, wait := runAsync(t, ctx, o, w)
	const n = 300
	var ps [][]byte
	for i := range n {
		ps = append(ps, krpc.AppendGetPeers(nil, []byte(fmt.Sprint(i)), peerID, hashN(i)))
	}
	c := sendAll(t, addrs[0], ps...)
	replies(t, c, n)
	cancel()
	st, err := wait()
	if err == nil || st.StopReason != StopInterrupted {
		t.Fatalf("err %v, stop %q", err, st.StopReason)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rows := readObservations(t, path)
	if len(rows) != n || st.Observations != n {
		t.Fatalf("file holds %d rows, stats say %d; want %d", len(rows), st.Observations, n)
	}
}

func TestMaxObservationsStopsTheRun(t *testing.T) {
	o := testOptions()
	o.Crawl = false
	o.MaxObservations = 50
	o.BatchSize = 16
	sink := &memSink{}
	addrs, wait := runAsync(t, context.Background(), o, sink)
	var ps [][]byte
	for i := range 200 {
		ps = append(ps, krpc.AppendGetPeers(nil, []byte(fmt.Sprint(i)), peerID, hashN(i)))
	}
	sendAll(t, addrs[0], ps...)
	st, err := wait()
	if err != nil {
		t.Fatal(err)
	}
	if len(sink.rows) != 50 || st.Observations != 50 || st.StopReason != StopMaxObservations {
		t.Fatalf("%d rows, stats %+v", len(sink.rows), st)
	}
}

// readObservations reads back every row of an observations file.
func readObservations(t *testing.T, path string) []schema.Observation {
	t.Helper()
	r, err := rowio.Open[schema.Observation](path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
