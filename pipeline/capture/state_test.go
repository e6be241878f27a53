package capture

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/krpc"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/tools/testnet"
)

// TestStateRejoinsWithoutBootstrap: a second run with no bootstrap list
// rejoins from the saved routing table, keeps its node IDs, and still
// finds the announced hashes.
func TestStateRejoinsWithoutBootstrap(t *testing.T) {
	net := startTestnet(t, testnet.Config{Seed: 8, Nodes: 12, Torrents: 20, Dead: 0, Searched: 0})
	truth := net.Truth()
	dir := t.TempDir()
	o := testOptions()
	o.StateDir = dir
	o.NodeIDs = 2
	o.Bootstrap = truth.Bootstrap
	// Each run goes on until it has found the hashes (runUntilFound),
	// not for 2 s and 3 s: a loaded machine may crawl slower, not worse.
	runUntilFound(t, o, truth, &memSink{})
	first, err := loadState(dir)
	if err != nil || len(first.Nodes) != 2 || len(first.Nodes[0].Table) == 0 {
		t.Fatalf("state after the first run: %+v, %v", first, err)
	}
	o.Bootstrap = nil
	st := runUntilFound(t, o, truth, &memSink{})
	second, _ := loadState(dir)
	for i := range first.Nodes {
		if first.Nodes[i].ID != second.Nodes[i].ID {
			t.Errorf("node %d changed ID: %s -> %s", i, first.Nodes[i].ID, second.Nodes[i].ID)
		}
	}
	if st.RoutingTable == 0 {
		t.Fatalf("warm restart found its hashes with an empty routing table; stats %+v", st)
	}
}

func TestNodeIDsSpreadOverTheKeyspace(t *testing.T) {
	tests := []struct {
		name  string
		saved state
		k     int
	}{
		{"fresh 4", state{}, 4},
		{"keeps saved", state{Nodes: []stateNode{{ID: "0102030405060708090a0b0c0d0e0f1011121314"}}}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var x uint64
			ids, _, _ := nodeIDs(tc.saved, tc.k, func() uint64 { x += 0x9e3779b97f4a7c15; return x })
			if len(ids) != tc.k {
				t.Fatalf("%d ids", len(ids))
			}
			if len(tc.saved.Nodes) > 0 && fmt.Sprintf("%x", ids[0]) != tc.saved.Nodes[0].ID {
				t.Fatalf("saved ID not reused: %x", ids[0])
			}
			fresh := ids[len(tc.saved.Nodes):]
			for i := 1; i < len(fresh); i++ {
				a := uint32(fresh[i-1][0])<<24 | uint32(fresh[i-1][1])<<16 | uint32(fresh[i-1][2])<<8 | uint32(fresh[i-1][3])
				b := uint32(fresh[i][0])<<24 | uint32(fresh[i][1])<<16 | uint32(fresh[i][2])<<8 | uint32(fresh[i][3])
				if gap, want := b-a, uint32((uint64(1)<<32)/uint64(tc.k)); gap < want-1 || gap > want+1 {
					t.Fatalf("ids %d and %d are %d apart, want %d", i-1, i, gap, want)
				}
			}
		})
	}
}

// TestStateDirInUse: a second capture on the state directory of a
// running one is refused (exit 75, naming the directory) before it opens
// a socket; it used to load the same node IDs and run them twice, and the
// last to stop overwrote the other's routing tables. Once the first
// stops, the directory is free again.
func TestStateDirInUse(t *testing.T) {
	dir := t.TempDir()
	o := testOptions()
	o.StateDir = dir
	o.Bootstrap = nil
	o.Crawl = false
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	o.Ready = func([]string) { close(ready) }
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, o, &memSink{})
		done <- err
	}()
	<-ready
	second := o
	second.Ready = nil
	_, err := Run(context.Background(), second, &memSink{})
	if exitcode.Of(err) != exitcode.Locked || err == nil || !strings.Contains(err.Error(), "--dht-state "+dir+" is in use by another capture (pid ") {
		t.Fatalf("second capture: %v (exit %d), want exit 75 naming %s", err, exitcode.Of(err), dir)
	}
	cancel()
	<-done
	second.Duration = 50 * time.Millisecond
	if _, err := Run(context.Background(), second, &memSink{}); err != nil {
		t.Fatalf("after the first stopped: %v", err)
	}
}

// TestSavedTablesFollowTheirIDs: each node starts from the routing table
// saved with its ID. A saved entry whose ID does not parse is skipped with
// its table; node i used to get entry i's table, so a node took the
// skipped entry's table or another node's. Checked by the state the run
// leaves: a node's table holds the contacts it started from.
func TestSavedTablesFollowTheirIDs(t *testing.T) {
	// Loopback endpoints that never answer: a contact stays in the table
	// for the short run.
	listener := func(id byte) contact {
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		var cid [20]byte
		cid[0], cid[19] = id, id
		return contact{ID: cid, Addr: c.LocalAddr().(*net.UDPAddr).AddrPort()}
	}
	x, y, z := listener(0xa1), listener(0xa2), listener(0xa3)
	const a = "0102030405060708090a0b0c0d0e0f1011121314"
	const b = "8102030405060708090a0b0c0d0e0f1011121314"
	entry := func(id string, cs ...contact) stateNode { return stateNode{ID: id, Table: toState(cs)} }
	tests := []struct {
		name  string
		saved []stateNode
		k     int
		want  map[string]netip.AddrPort // node ID: the one contact of its table
	}{
		{"bad ID first", []stateNode{entry("zz", x), entry(a, y)}, 1, map[string]netip.AddrPort{a: y.Addr}},
		{"short ID between", []stateNode{entry(a, y), entry(a[:38], x), entry(b, z)}, 2,
			map[string]netip.AddrPort{a: y.Addr, b: z.Addr}},
		{"all good", []stateNode{entry(a, y), entry(b, z)}, 2, map[string]netip.AddrPort{a: y.Addr, b: z.Addr}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := saveState(dir, state{Nodes: tt.saved}); err != nil {
				t.Fatal(err)
			}
			o := testOptions()
			o.StateDir = dir
			o.NodeIDs = tt.k
			o.Crawl = false
			o.Duration = 300 * time.Millisecond
			// Its contacts never answer: the run is partial
			// (TestSilentDHTIsPartial), and saves its state all the same.
			if _, err := Run(context.Background(), o, &memSink{}); exitcode.Of(err) != exitcode.Partial {
				t.Fatalf("error %v, want the silent run's partial", err)
			}
			after, err := loadState(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(after.Nodes) != len(tt.want) {
				t.Fatalf("%d nodes saved, want %d", len(after.Nodes), len(tt.want))
			}
			for _, sn := range after.Nodes {
				var got []netip.AddrPort
				for _, c := range fromState(sn.Table) {
					got = append(got, c.Addr)
				}
				if want, ok := tt.want[sn.ID]; !ok || len(got) != 1 || got[0] != want {
					t.Errorf("node %s: table %v, want [%v]", sn.ID, got, want)
				}
			}
		})
	}
}

// TestNodeIDsSkipRepeatedIDs: a saved ID repeated in the state file (by
// hand, or spelt in another case) is used once, with the first entry's
// table; the node it would have gone to gets the next saved ID or a new
// one. Two nodes used to start with one ID.
func TestNodeIDsSkipRepeatedIDs(t *testing.T) {
	const a = "0102030405060708090a0b0c0d0e0f1011121314"
	const b = "8102030405060708090a0b0c0d0e0f1011121314"
	x := contact{ID: [20]byte{1}, Addr: netip.MustParseAddrPort("127.0.0.1:1001")}
	y := contact{ID: [20]byte{2}, Addr: netip.MustParseAddrPort("127.0.0.1:1002")}
	z := contact{ID: [20]byte{3}, Addr: netip.MustParseAddrPort("127.0.0.1:1003")}
	entry := func(id string, c contact) stateNode { return stateNode{ID: id, Table: toState([]contact{c})} }
	tests := []struct {
		name   string
		saved  []stateNode
		k      int
		want   []string         // the saved IDs used, in order; the rest are new
		tables []netip.AddrPort // the contact of each saved ID's table
	}{
		{"repeat before another", []stateNode{entry(a, x), entry(a, y), entry(b, z)}, 2,
			[]string{a, b}, []netip.AddrPort{x.Addr, z.Addr}},
		{"repeat in upper case", []stateNode{entry(a, x), entry(strings.ToUpper(a), y)}, 2,
			[]string{a}, []netip.AddrPort{x.Addr}},
		{"only repeats", []stateNode{entry(b, z), entry(b, x), entry(b, y)}, 3,
			[]string{b}, []netip.AddrPort{z.Addr}},
		{"repeat past k", []stateNode{entry(a, x), entry(b, y), entry(a, z)}, 2,
			[]string{a, b}, []netip.AddrPort{x.Addr, y.Addr}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n uint64
			ids, tables, _ := nodeIDs(state{Nodes: tt.saved}, tt.k, func() uint64 { n += 0x9e3779b97f4a7c15; return n })
			if len(ids) != tt.k || len(tables) != tt.k {
				t.Fatalf("%d IDs and %d tables, want %d", len(ids), len(tables), tt.k)
			}
			seen := map[[20]byte]bool{}
			for i, id := range ids {
				if seen[id] {
					t.Fatalf("ID %x given to two nodes: %x", id, ids)
				}
				seen[id] = true
				if i >= len(tt.want) {
					if tables[i] != nil {
						t.Errorf("new ID %x has a saved table", id)
					}
					continue
				}
				if got := fmt.Sprintf("%x", id); got != tt.want[i] {
					t.Fatalf("node %d: ID %s, want %s", i, got, tt.want[i])
				}
				if cs := fromState(tables[i]); len(cs) != 1 || cs[0].Addr != tt.tables[i] {
					t.Errorf("node %d: table %v, want [%v]", i, cs, tt.tables[i])
				}
			}
		})
	}
}

// TestSpareTablesSeedTheCrawler: the table saved under an entry no node
// takes (its ID does not parse, repeats an earlier one, or is past
// --node-ids) is crawled from: its contact gets a query. Those tables
// used to be dropped, contacts and all.
func TestSpareTablesSeedTheCrawler(t *testing.T) {
	const a = "0102030405060708090a0b0c0d0e0f1011121314"
	const b = "8102030405060708090a0b0c0d0e0f1011121314"
	tests := []struct {
		name  string
		saved func(x contact) []stateNode
	}{
		{"bad ID", func(x contact) []stateNode { return []stateNode{{ID: "zz", Table: toState([]contact{x})}, {ID: a}} }},
		{"repeated ID", func(x contact) []stateNode { return []stateNode{{ID: a}, {ID: a, Table: toState([]contact{x})}} }},
		{"past --node-ids", func(x contact) []stateNode { return []stateNode{{ID: a}, {ID: b, Table: toState([]contact{x})}} }},
		{"the node's own", func(x contact) []stateNode { return []stateNode{{ID: a, Table: toState([]contact{x})}} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			peer, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				t.Fatal(err)
			}
			defer peer.Close()
			x := contact{ID: [20]byte{0xa1}, Addr: peer.LocalAddr().(*net.UDPAddr).AddrPort()}
			dir := t.TempDir()
			if err := saveState(dir, state{Nodes: tt.saved(x)}); err != nil {
				t.Fatal(err)
			}
			o := testOptions()
			o.StateDir = dir
			o.NodeIDs = 1
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			_, wait := runAsync(t, ctx, o, &memSink{})
			// The run goes on until the contact is asked (a 500 ms run
			// had to ask it in time), or hangGuard passes.
			buf := make([]byte, 1500)
			peer.SetReadDeadline(time.Now().Add(hangGuard))
			n, _, err := peer.ReadFromUDPAddrPort(buf)
			cancel()
			wait()
			if err != nil || !strings.Contains(string(buf[:n]), "1:y1:q") {
				t.Fatalf("the saved contact got no query: %q, %v", buf[:n], err)
			}
		})
	}
}

// stuckSink takes nothing until release is closed, as a stdout nobody
// reads.
type stuckSink struct{ release chan struct{} }

func (s stuckSink) Write([]schema.Observation) error { <-s.release; return nil }

// TestStateSaverWhileTheSinkIsStuck: with a sink that takes nothing, the
// node blocks handing it observations once the writer's queue is full,
// so that a stopped run never gets to its own save of the state; the
// function handed to StateSaver (app calls it before exiting on a stalled
// stdout) saves it all the same.
func TestStateSaverWhileTheSinkIsStuck(t *testing.T) {
	dir := t.TempDir()
	o := testOptions()
	o.Crawl = false
	o.StateDir = dir
	o.BatchSize = 1 // one batch per observation: the queue of 64 fills at once
	o.Duration = 0
	saves := make(chan func(), 1)
	o.StateSaver = func(save func()) { saves <- save }
	sink := stuckSink{release: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	addrs, wait := runAsync(t, ctx, o, sink)
	defer func() {
		close(sink.release)
		wait()
	}()
	save := <-saves
	var ps [][]byte
	for i := range 200 {
		ps = append(ps, krpc.AppendGetPeers(nil, []byte(fmt.Sprint(i)), peerID, hashN(i)))
	}
	sendAll(t, addrs[0], ps...)
	cancel()
	time.Sleep(time.Second) // the drain reads the queries and blocks
	state := filepath.Join(dir, stateFileName)
	if _, err := os.Stat(state); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the state is there before the save (%v): the run did not block, and tests nothing", err)
	}
	save()
	st, err := loadState(dir)
	if err != nil || len(st.Nodes) != 1 {
		t.Fatalf("saved state: %+v, %v; want one node", st, err)
	}
	save() // once saved, nothing more
}
