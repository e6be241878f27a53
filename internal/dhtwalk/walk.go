// Package dhtwalk runs get_peers traversals over anacrolix/dht's
// traversal package that end only once they have begun: fetch's lookups
// (pipeline/fetch) and the testnet's searches (tools/testnet) use it.
package dhtwalk

import (
	"context"
	"sync"

	"github.com/anacrolix/dht/v2"
	"github.com/anacrolix/dht/v2/int160"
	"github.com/anacrolix/dht/v2/krpc"
	"github.com/anacrolix/dht/v2/traversal"
)

// Walk is a get_peers traversal, as dht.Server.AnnounceTraversal runs one
// (without announcing), except for how it ends. traversal.Start runs the
// operation before any node is added; one that runs first finds nothing
// to query and offers "stalled", and that stale offer can still be
// pending (its goroutine preempted on a loaded machine) when
// AnnounceTraversal begins to wait for the stall: the traversal then stops
// at once, cancelling its first queries, and the lookup ends with no node
// having answered (fetch's local_error; TestMixedRunThroughDHT under
// load). A Walk waits for the stall only once its first query has begun,
// when the operation is past that first offer.
type Walk struct {
	op *traversal.Operation
	// Peers carries each answer (its values, possibly none) until the
	// traversal has ended; it is closed then. Read it to the end.
	Peers     chan dht.PeersValues
	began     chan struct{} // closed when the first query begins
	beganOnce sync.Once
}

// Start starts a get_peers traversal for ih from the routing table (or
// the starting nodes, if the table is empty) of s.
func Start(s *dht.Server, ih [20]byte) (*Walk, error) {
	w := newWalk(s, ih)
	nodes, err := s.TraversalStartingNodes()
	if err != nil {
		w.op.Stop()
		return nil, err
	}
	w.run(w.op.AddNodes(nodes))
	return w, nil
}

// newWalk starts the traversal operation of a walk for ih, with no node
// to query yet.
func newWalk(s *dht.Server, ih [20]byte) *Walk {
	w := &Walk{Peers: make(chan dht.PeersValues), began: make(chan struct{})}
	target := int160.FromByteArray(ih)
	w.op = traversal.Start(traversal.OperationInput{
		Target: ih,
		DoQuery: func(ctx context.Context, addr krpc.NodeAddr) traversal.QueryResult {
			w.beganOnce.Do(func() { close(w.began) })
			res := s.GetPeers(ctx, dht.NewAddr(addr.UDP()), target, false, dht.QueryRateLimiting{})
			if r := res.Reply.R; r != nil {
				bound(r)
				pv := dht.PeersValues{Peers: r.Values, NodeInfo: krpc.NodeInfo{Addr: addr, ID: r.ID}, Return: *r}
				select {
				case w.Peers <- pv:
				case <-ctx.Done(): // the traversal is stopping
				}
			}
			return res.TraversalQueryResult(addr)
		},
		NodeFilter: s.TraversalNodeFilter,
		DataFilter: func(data any) bool {
			_, ok := data.(string) // a token
			return ok
		},
	})
	return w
}

// Bounds on what one reply can make a walk do. BEP 5 has a node answer
// with the K = 8 closest nodes it knows, and real nodes send at most 100
// values (libtorrent's max_peers_reply), yet one datagram can list 2,500
// nodes or 8,000 values, any addresses a liar likes: each node listed
// closer to the target than those that answered is queried (the
// traversal queries every one while fewer than K have answered), and
// each value is a peer fetch dials. A reply's first MaxNodesPerReply
// nodes (of each family) and MaxValuesPerReply values are kept, as
// capture's walk keeps the first 16 nodes of a reply.
const (
	MaxNodesPerReply  = 16
	MaxValuesPerReply = 100
)

// bound cuts reply r's nodes and values to the bounds above.
func bound(r *krpc.Return) {
	r.Nodes = r.Nodes[:min(len(r.Nodes), MaxNodesPerReply)]
	r.Nodes6 = r.Nodes6[:min(len(r.Nodes6), MaxNodesPerReply)]
	r.Values = r.Values[:min(len(r.Values), MaxValuesPerReply)]
}

// run ends the walk when the traversal stalls (or is stopped), added being
// how many nodes it was given to start from.
func (w *Walk) run(added int) {
	go func() {
		if added > 0 {
			// Until a query has begun, a stall offered may be stale.
			select {
			case <-w.began:
			case <-w.op.Stopped():
			}
		}
		<-w.op.Stalled() // also ready once the operation has stopped
		w.op.Stop()
		<-w.op.Stopped()
		close(w.Peers)
	}()
}

// Stop ends the walk early: its queries are cancelled. Peers is still
// closed once they have ended.
func (w *Walk) Stop() { w.op.Stop() }

// Stats are the traversal's counts; read them once Peers is closed.
func (w *Walk) Stats() dht.TraversalStats { return *w.op.Stats() }
