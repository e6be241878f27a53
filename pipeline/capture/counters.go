package capture

import (
	"sync/atomic"

	"github.com/infohash/infohash/internal/metrics"
)

// Query methods counted separately; anything else is "other".
var methods = [...]string{"ping", "find_node", "get_peers", "announce_peer", "sample_infohashes", "other"}

const (
	mPing = iota
	mFindNode
	mGetPeers
	mAnnouncePeer
	mSampleInfohashes
	mOther
)

// MetricLabels names the label of the incoming queries in --metrics-file
// (metrics.Labeler): method, every one counted written even at 0.
func (Stats) MetricLabels() map[string]metrics.Label {
	return map[string]metrics.Label{"queries_by_method": {Name: "method", Known: methods[:]}}
}

func methodIndex(q []byte) int {
	for i, m := range methods[:mOther] {
		if string(q) == m {
			return i
		}
	}
	return mOther
}

// counters are the live, shared counters of a run.
type counters struct {
	packetsIn, malformed, badTokens, responses          atomic.Int64
	sampleQueries, sampleResponses, sampleUnsupported   atomic.Int64
	samples, findNodeQueries, queryTimeouts, nodesKnown atomic.Int64
	distinct, observations, observationsOver            atomic.Int64
	repliesLimited, libraryDropped, socketDropped       atomic.Int64
	fetchLookups, repeatsDropped, hashCapDropped        atomic.Int64
	queries                                             [len(methods)]atomic.Int64
}

func (c *counters) stats() Stats {
	s := Stats{
		PacketsIn:         c.packetsIn.Load(),
		Queries:           map[string]int64{},
		Malformed:         c.malformed.Load(),
		BadTokens:         c.badTokens.Load(),
		Responses:         c.responses.Load(),
		SampleQueries:     c.sampleQueries.Load(),
		SampleResponses:   c.sampleResponses.Load(),
		SampleUnsupported: c.sampleUnsupported.Load(),
		Samples:           c.samples.Load(),
		FindNodeQueries:   c.findNodeQueries.Load(),
		QueryTimeouts:     c.queryTimeouts.Load(),
		NodesKnown:        c.nodesKnown.Load(),
		DistinctHashes:    c.distinct.Load(),
		Observations:      c.observations.Load(),
		ObservationsOver:  c.observationsOver.Load(),
		FetchLookups:      c.fetchLookups.Load(),
		RepeatsDropped:    c.repeatsDropped.Load(),
		HashCapDropped:    c.hashCapDropped.Load(),
		RepliesLimited:    c.repliesLimited.Load(),
		LibraryDropped:    c.libraryDropped.Load(),
		SocketDropped:     c.socketDropped.Load(),
	}
	for i, m := range methods {
		s.Queries[m] = c.queries[i].Load()
	}
	return s
}
