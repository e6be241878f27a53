package capture

import (
	"bytes"
	"context"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"

	akrpc "github.com/anacrolix/dht/v2/krpc"

	"github.com/infohash/infohash/formats/krpc"
)

// answerer is a DHT node on loopback that answers the queries whose
// method answer accepts with an empty reply under id, and nothing else.
func answerer(t *testing.T, id []byte, answer func(method string) bool) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go func() {
		buf := make([]byte, 1<<16)
		var m krpc.Msg
		for {
			nb, from, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			if krpc.Parse(buf[:nb], &m) != nil || m.Y != krpc.Query || !answer(string(m.Q)) {
				continue
			}
			_, _ = c.WriteToUDPAddrPort(krpc.AppendReply(nil, m.T, krpc.Reply{ID: id, HasNodes: true}, nil), from)
		}
	}()
	return c
}

// TestRepliesHandOutOnlyNodesThatAnswered: the "nodes" of a reply lists
// only routing-table nodes that answered one of the run's queries (the
// library's bootstrap, or the BEP 51 walk), never one that only sent a
// query: its source may be forged, and capture handed it out to everyone
// asking near its ID (the library adds query senders to its table).
func TestRepliesHandOutOnlyNodesThatAnswered(t *testing.T) {
	for _, tt := range []struct {
		name   string
		crawl  bool
		answer func(method string) bool
	}{
		{"confirmed by the library's bootstrap (--passive)", false, func(string) bool { return true }},
		{"confirmed by the walk's sample_infohashes", true, func(q string) bool { return q == "sample_infohashes" }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			good := []byte("ANSWERS-ID-012345678")
			silent := []byte("SILENT-ID-0123456789") // the sender of queries, which answers none
			r := answerer(t, good, tt.answer)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			o := testOptions()
			o.Crawl = tt.crawl
			o.Bootstrap = []string{r.LocalAddr().String()}
			addrs, wait := runAsync(t, ctx, o, &memSink{})
			defer func() { cancel(); wait() }()
			// The library's table learns of it by its query (the
			// walk's sample_infohashes is not the library's).
			ua, _ := net.ResolveUDPAddr("udp4", addrs[0])
			if _, err := r.WriteToUDP(krpc.AppendPing(nil, []byte("p"), good), ua); err != nil {
				t.Fatal(err)
			}
			s := sendAll(t, addrs[0])
			silentAddr := s.LocalAddr().String()
			// Ask until the node that answered is handed out (hangGuard
			// bounds it), then on for a few more table snapshots (one a
			// second): the sender of these queries, in the library's
			// table since its first one, must never be. Those 3 s are
			// the window in which it must not be listed: a slow machine
			// takes fewer snapshots in it, which may let a broken run
			// pass, never fail a sound one. A reply the 100 ms read
			// misses is read by the next one: no speed is claimed.
			var sawGood time.Time
			buf := make([]byte, 1<<16)
			end := time.Now().Add(hangGuard)
			for i := 0; sawGood.IsZero() || time.Since(sawGood) < 3*time.Second; i++ {
				if sawGood.IsZero() && time.Now().After(end) {
					t.Fatalf("the node that answered was never handed out")
				}
				if _, err := s.Write(krpc.AppendFindNode(nil, []byte{'f', byte(i)}, silent, silent)); err != nil {
					t.Fatal(err)
				}
				s.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
				nb, err := s.Read(buf)
				if err != nil {
					continue
				}
				var m krpc.Msg
				if krpc.Parse(buf[:nb], &m) != nil || m.Y != krpc.Response {
					continue // the library's own query, say
				}
				var listed []string
				parseCompact(m.Nodes, func(c contact) { listed = append(listed, c.Addr.String()) })
				if slices.Contains(listed, silentAddr) {
					t.Fatalf("reply %d hands out %s, which never answered a query (nodes %v)", i, silentAddr, listed)
				}
				if sawGood.IsZero() && bytes.Contains(m.Nodes, good) {
					sawGood = time.Now()
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

// TestConfirmedOnly: which of a table's nodes replies list.
func TestConfirmedOnly(t *testing.T) {
	n := fuzzNode(t)
	c := n.r.crawler
	at := func(i int) netip.AddrPort {
		return netip.AddrPortFrom(netip.MustParseAddr("198.51.100.1"), uint16(1000+i))
	}
	id := func(i int) [20]byte { return [20]byte{byte(i)} }
	idb := func(i int) []byte { b := id(i); return b[:] }
	ni := func(i, idx int) akrpc.NodeInfo {
		return akrpc.NodeInfo{ID: id(idx), Addr: akrpc.NodeAddr{IP: at(i).Addr().AsSlice(), Port: int(at(i).Port())}}
	}
	var a asks
	answerLibrary := func(i, idx int) {
		wire, _ := a.sent(at(i), []byte{'q', byte(i)}, time.Now())
		m := krpc.Msg{T: wire, Y: krpc.Response, ID: idb(idx)}
		a.reply(at(i), &m)
	}
	answerLibrary(1, 1)                                                      // the library asked, it answered
	answerLibrary(2, 9)                                                      // it answered under another ID than the table's
	a.reply(at(3), &krpc.Msg{T: []byte("zz"), Y: krpc.Response, ID: idb(3)}) // never asked
	for i, st := range map[int]uint8{4: stateBEP51, 5: stateNoBEP51, 6: stateDead} {
		c.remotes[at(i)] = &remote{id: id(i), state: st, answered: true}
	}
	c.remotes[at(7)] = &remote{id: id(7), state: stateBEP51} // rested from the state file, not heard this run
	var nis []akrpc.NodeInfo
	for i := 1; i <= 8; i++ {
		nis = append(nis, ni(i, i))
	}
	var got []int
	for _, x := range confirmedOnly(nis, &a, c) {
		got = append(got, int(x.ID[0]))
	}
	if want := []int{1, 4, 5}; !slices.Equal(got, want) {
		t.Fatalf("handed out %v, want %v", got, want)
	}
	if got := confirmedOnly(nis, &a, nil); len(got) != 1 || got[0].ID != id(1) {
		t.Fatalf("without a walk: handed out %v, want node 1", got)
	}
}

// TestPassiveWarmStartConfirmsItsTable: a --passive run that starts from a
// saved table (8 nodes or more, so no bootstrap) has no walk to confirm
// them: from warmCheckAfter on, it bootstraps while fewer than 8 are
// confirmed, rather than hand out no nodes for the whole run.
func TestPassiveWarmStartConfirmsItsTable(t *testing.T) {
	defer func(d time.Duration) { warmCheckAfter = d }(warmCheckAfter)
	warmCheckAfter = time.Second
	var saved []contact
	for i := range 8 {
		id := [20]byte{'A', 'N', 'S', byte('0' + i)}
		r := answerer(t, id[:], func(string) bool { return true })
		saved = append(saved, contact{ID: id, Addr: r.LocalAddr().(*net.UDPAddr).AddrPort()})
	}
	dir := t.TempDir()
	if err := saveState(dir, state{Nodes: []stateNode{{ID: "0123456789012345678901234567890123456789", Table: toState(saved)}}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := testOptions()
	o.Crawl = false
	o.StateDir = dir
	addrs, wait := runAsync(t, ctx, o, &memSink{})
	defer func() { cancel(); wait() }()
	s := sendAll(t, addrs[0])
	buf := make([]byte, 1<<16)
	end := time.Now().Add(hangGuard)
	for i := 0; ; i++ {
		if time.Now().After(end) {
			t.Fatalf("no saved node was handed out")
		}
		if _, err := s.Write(krpc.AppendFindNode(nil, []byte{'f', byte(i)}, peerID, saved[0].ID[:])); err != nil {
			t.Fatal(err)
		}
		s.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		nb, err := s.Read(buf)
		var m krpc.Msg
		if err == nil && krpc.Parse(buf[:nb], &m) == nil && m.Y == krpc.Response && bytes.Contains(m.Nodes, []byte("ANS")) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
