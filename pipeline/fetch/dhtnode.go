package fetch

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/anacrolix/dht/v2"
	"github.com/anacrolix/dht/v2/krpc"
	alog "github.com/anacrolix/log"
	"golang.org/x/time/rate"

	"github.com/infohash/infohash/internal/reach"
)

// dhtNode is fetch's own DHT node. It only looks peers up (get_peers
// traversals); it never announces itself.
type dhtNode struct {
	s    *dht.Server
	conn *heardConn
	// stopPings ends the pings of a warm start still waiting for answers.
	stopPings context.CancelFunc
}

// dhtStart says how a node joined the DHT.
type dhtStart struct {
	Warm     bool // from saved nodes, without the bootstrap routers
	Saved    int  // nodes in the saved state
	Answered int  // saved nodes that answered before lookups began
	Nodes    int  // routing table size when lookups began
}

// Warm starts stop waiting for the pings of saved nodes once warmEnough
// of them have answered (a full bucket: enough for a traversal to fan
// out), or warmGrace after the first answer; the pings still out go on
// and add late answerers to the table.
const (
	warmEnough = 8
	warmGrace  = 250 * time.Millisecond
)

// startDHT starts fetch's DHT node on o.DHTListen, sending queries only to
// the addresses r lets through. With saved nodes (a loaded --dht-state) it
// takes the saved node ID, pings the saved nodes and, as soon as enough
// have answered, returns with them in the routing table: lookups start
// from them at once while the table maintainer refreshes the table in the
// background; the routers of o.Bootstrap are not contacted. When no saved
// node answers (or none were saved), it bootstraps from o.Bootstrap and
// fills the table first (bounded by ctx and 15 s). A bootstrap that
// reaches nobody is not an error: lookups then fail one by one as local
// errors, which the scheduler does not hold against hashes.
func startDHT(ctx context.Context, o Options, r reach.Rule, saved *loadedState) (*dhtNode, dhtStart, error) {
	pc, err := net.ListenPacket("udp", o.DHTListen)
	if err != nil {
		return nil, dhtStart{}, fmt.Errorf("fetch: DHT listen %s: %w", o.DHTListen, err)
	}
	if uc, ok := pc.(*net.UDPConn); ok {
		// Hundreds of lookups at once answer in bursts; the default
		// buffer (~200 KiB) drops replies, which costs a 2 s resend each.
		_ = uc.SetReadBuffer(4 << 20)
	}
	conn := newHeardConn(pc, r)
	conn.guard = o.guard
	cfg := dht.NewDefaultServerConfig()
	cfg.Conn = conn
	bootstrap := o.Bootstrap
	cfg.StartingNodes = func() ([]dht.Addr, error) { return resolveNodes(bootstrap) }
	cfg.Logger = alog.Default.WithFilterLevel(alog.Disabled)
	if o.DHTQueryTimeout > 0 {
		// The library sends each lookup query once and gives up on it
		// after this delay.
		cfg.QueryResendDelay = func() time.Duration { return o.DHTQueryTimeout }
	}
	if o.DHTQueryRate <= 0 {
		cfg.SendLimiter = rate.NewLimiter(rate.Inf, 0)
	} else {
		cfg.SendLimiter = rate.NewLimiter(rate.Limit(o.DHTQueryRate), max(1, int(o.DHTQueryRate/10)))
	}
	var st dhtStart
	if saved != nil {
		// The saved routing table was built around this ID.
		cfg.NodeId = krpc.ID(saved.ID)
		st.Saved = len(saved.Nodes)
	}
	s, err := dht.NewServer(cfg)
	if err != nil {
		conn.Close()
		return nil, dhtStart{}, fmt.Errorf("fetch: DHT node: %w", err)
	}
	pctx, stopPings := context.WithCancel(context.Background())
	n := &dhtNode{s: s, conn: conn, stopPings: stopPings}
	if st.Saved > 0 {
		w := startBootWait(o.Logger, s, "fetch: DHT warm start", "saved_nodes", st.Saved)
		var why string
		st.Answered, why = n.pingSaved(ctx, pctx, saved.Nodes)
		st.Warm = st.Answered > 0
		w.end(why, "answered", st.Answered)
	}
	if !st.Warm {
		w := startBootWait(o.Logger, s, "fetch: DHT bootstrap", "routers", len(bootstrap), "timeout", bootstrapWait.String())
		bctx, cancel := context.WithTimeout(ctx, bootstrapWait)
		ts, err := s.BootstrapContext(bctx)
		w.end(bootstrapEnd(ctx, bctx, ts, err))
		cancel()
	}
	// On a warm start the maintainer bootstraps first, from the table.
	go s.TableMaintainer()
	st.Nodes = s.NumNodes()
	return n, st, nil
}

// pingSaved pings nodes and returns how many answered before it stopped
// waiting (see warmEnough, warmGrace) or ctx ended, and why it stopped
// (for --debug). A node that answers enters the routing table (the
// library adds every node it hears a reply from); one that does not stays
// out of it. The pings run under pctx.
func (n *dhtNode) pingSaved(ctx, pctx context.Context, nodes []savedNode) (int, string) {
	answers := make(chan bool, len(nodes))
	for _, sn := range nodes {
		addr := dht.NewAddr(net.UDPAddrFromAddrPort(sn.Addr))
		go func() {
			res := n.s.Query(pctx, addr, "ping", dht.QueryInput{NumTries: 1})
			answers <- res.ToError() == nil
		}()
	}
	answered := 0
	var grace <-chan time.Time
	for range nodes {
		select {
		case ok := <-answers:
			if !ok {
				continue
			}
			answered++
			if answered >= min(warmEnough, len(nodes)) {
				return answered, "enough saved nodes answered"
			}
			if grace == nil {
				grace = time.After(warmGrace)
			}
		case <-grace:
			return answered, "grace after the first answer passed: " + warmGrace.String()
		case <-ctx.Done():
			return answered, "cut short: " + context.Cause(ctx).Error()
		}
	}
	if answered == 0 {
		return 0, "no saved node answered"
	}
	return answered, "every saved node answered or failed"
}

// goodNodes returns the nodes of the routing table that answered a query
// of ours during this run: what the next run pings first. Nodes that only
// queried us may sit behind a NAT that would not let a query in.
func (n *dhtNode) goodNodes() []savedNode {
	var out []savedNode
	for _, ni := range n.s.Nodes() {
		ap := unmapped(ni.Addr.ToNodeAddrPort().AddrPort)
		if ap.Port() == 0 || !ap.Addr().IsValid() || !n.conn.answered(ap) {
			continue
		}
		out = append(out, savedNode{ID: ni.ID, Addr: ap})
	}
	return out
}

func (n *dhtNode) close() {
	n.stopPings()
	n.s.Close()
}

// unmapped is ap with an IPv4-mapped IPv6 address as plain IPv4.
func unmapped(ap netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}
