package fetch

import (
	"context"
	"sync"

	"github.com/anacrolix/dht/v2"
	"github.com/anacrolix/dht/v2/int160"
	"github.com/anacrolix/dht/v2/krpc"
	"github.com/anacrolix/dht/v2/traversal"
)

// walk is a get_peers traversal, as dht.Server.AnnounceTraversal runs one
// (without announcing), except for how it ends. traversal.Start runs the
// operation before any node is added; one that runs first finds nothing
// to query and offers "stalled", and that stale offer can still be
// pending (its goroutine preempted on a loaded machine) when
// AnnounceTraversal begins to wait for the stall: the traversal then stops
// at once, cancelling its first queries, and the lookup ends with no node
// having answered (local_error; TestMixedRunThroughDHT under load). A walk
// waits for the stall only once its first query has begun, when the
// operation is past that first offer.
type walk struct {
	op *traversal.Operation
	// peers carries each answer (its values, possibly none) until the
	// traversal has ended; it is closed then. Read it to the end.
	peers     chan dht.PeersValues
	began     chan struct{} // closed when the first query begins
	beganOnce sync.Once
}

// startWalk starts a get_peers traversal for ih from the routing table (or
// the starting nodes, if the table is empty) of s.
func startWalk(s *dht.Server, ih [20]byte) (*walk, error) {
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
func newWalk(s *dht.Server, ih [20]byte) *walk {
	w := &walk{peers: make(chan dht.PeersValues), began: make(chan struct{})}
	target := int160.FromByteArray(ih)
	w.op = traversal.Start(traversal.OperationInput{
		Target: ih,
		DoQuery: func(ctx context.Context, addr krpc.NodeAddr) traversal.QueryResult {
			w.beganOnce.Do(func() { close(w.began) })
			res := s.GetPeers(ctx, dht.NewAddr(addr.UDP()), target, false, dht.QueryRateLimiting{})
			if r := res.Reply.R; r != nil {
				pv := dht.PeersValues{Peers: r.Values, NodeInfo: krpc.NodeInfo{Addr: addr, ID: r.ID}, Return: *r}
				select {
				case w.peers <- pv:
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

// run ends the walk when the traversal stalls (or is stopped), added being
// how many nodes it was given to start from.
func (w *walk) run(added int) {
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
		close(w.peers)
	}()
}

// stop ends the walk early: its queries are cancelled.
func (w *walk) stop() { w.op.Stop() }

// stats are the traversal's counts; read them once peers is closed.
func (w *walk) stats() dht.TraversalStats { return *w.op.Stats() }
