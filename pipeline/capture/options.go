package capture

import (
	"log/slog"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/clock"
	"github.com/infohash/infohash/internal/dhtboot"
)

// Options configure a capture run.
type Options struct {
	// NodeIDs is how many DHT nodes to run, their IDs spread evenly over
	// the keyspace. Node i listens on Listen's port + i (or a free port
	// when that port is 0).
	NodeIDs int
	// Listen is the UDP address of the first node, e.g. ":6881".
	Listen string
	// Bootstrap is the list of host:port routers to join through.
	Bootstrap []string
	// StateDir keeps node IDs and routing tables between runs ("" = none).
	StateDir string
	// StateSaver, if set, is handed a function that saves the nodes'
	// state to StateDir at once, as the end of the run does, once they
	// run (not called without a StateDir). It may be called from any
	// goroutine, and does nothing after the run's own save: a caller
	// that has to exit before Run returns (a stdout nobody reads, which
	// blocks the nodes once the writer's queue is full) calls it first.
	StateSaver func(save func())
	// Duration bounds the run (0 = until MaxObservations or the context).
	Duration time.Duration
	// MaxObservations stops the run once this many are written (0 = no
	// limit).
	MaxObservations int64
	// MaxRPS limits the queries the crawler sends per second, over all
	// nodes (0 = no limit).
	MaxRPS float64
	// Crawl enables the active BEP 51 walk; passive recording is always on.
	Crawl bool
	// RepeatWindow: a sender's get_peers of a hash, and its announce_peer
	// of it, are recorded at most once per RepeatWindow; its repeats are
	// answered, not recorded (recent.go). 0 records every query.
	RepeatWindow time.Duration
	// MaxSightingsPerHash: the get_peers of one hash recorded per
	// RepeatWindow, over all senders; those past it are answered, not
	// recorded (recent.go). 0, or a RepeatWindow of 0, caps nothing.
	MaxSightingsPerHash int
	// SampleInterval is the interval reported to those who sample us.
	SampleInterval time.Duration
	// RunID is written into every observation.
	RunID string
	// Clock stamps observed_at (the zero Clock: the wall clock).
	Clock clock.Clock
	// Logger receives progress and problems (default slog.Default()).
	Logger *slog.Logger
	// BatchSize is how many observations travel to the sink at once.
	BatchSize int
	// Progress, when > 0, logs the counters this often.
	Progress time.Duration
	// Ready, when set, is called with the nodes' UDP addresses once they
	// listen (tests and benchmarks use it to find port-0 sockets).
	Ready func(addrs []string)

	// drainQuiet and drainMax bound the read loops' drain at stop
	// (default the constants of the same names; tests change them).
	drainQuiet, drainMax time.Duration
	// recentBuckets sizes the recent set (0: the constant recentBuckets;
	// tests give a small one, to fill it).
	recentBuckets int
	// hashCapBuckets sizes the per-hash cap's table (0: the constant
	// hashCapBuckets; tests give a small one, to fill it).
	hashCapBuckets int
}

// DefaultRepeatWindow is Options.RepeatWindow's default: a lookup's
// retries (seconds apart) are one sighting, a client's re-announce (every
// 15 to 30 minutes) another.
const DefaultRepeatWindow = 10 * time.Minute

// DefaultMaxSightingsPerHash is Options.MaxSightingsPerHash's default
// (recent.go argues the number).
const DefaultMaxSightingsPerHash = 32

// DefaultOptions returns the settings of a plain `infohash capture`.
func DefaultOptions() Options {
	return Options{
		NodeIDs:             1,
		Listen:              ":6881",
		Bootstrap:           dhtboot.Default(), // the public routers fetch uses too
		MaxRPS:              500,
		Crawl:               true,
		RepeatWindow:        DefaultRepeatWindow,
		MaxSightingsPerHash: DefaultMaxSightingsPerHash,
		SampleInterval:      6 * time.Hour,
		BatchSize:           4096,
		Progress:            10 * time.Second,
	}
}

// Sink receives observations in batches. The slice is only valid during
// the call. rowio.Writer[schema.Observation] is a Sink.
type Sink interface {
	Write(rows []schema.Observation) error
}

// Stats are the counters of a run (stderr and --stats-json).
type Stats struct {
	Nodes             int              `json:"nodes"`
	PacketsIn         int64            `json:"packets_in"`
	Queries           map[string]int64 `json:"queries_by_method"`
	Malformed         int64            `json:"malformed_packets"`
	BadTokens         int64            `json:"announce_bad_token"`
	RepliesLimited    int64            `json:"replies_limited"` // queries read and recorded, not answered: their address had its share
	Responses         int64            `json:"responses_in"`
	LibraryDropped    int64            `json:"library_dropped"` // packets for the routing-table library its queue had no room for (pipeconn.go)
	SocketDropped     int64            `json:"socket_dropped"`  // packets the kernel dropped, the nodes' receive buffers full: never read nor recorded (drops.go)
	SampleQueries     int64            `json:"sample_queries_sent"`
	SampleResponses   int64            `json:"sample_responses"`
	SampleUnsupported int64            `json:"sample_unsupported"`
	Samples           int64            `json:"samples"`
	FindNodeQueries   int64            `json:"find_node_queries_sent"`
	QueryTimeouts     int64            `json:"query_timeouts"`
	NodesKnown        int64            `json:"nodes_known"`
	RoutingTable      int              `json:"routing_table_nodes"`
	DistinctHashes    int64            `json:"distinct_hashes"` // of the observations the output took (not a refused batch's); past 65,536 an estimate (distinct.go)
	Observations      int64            `json:"observations_written"`
	ObservationsOver  int64            `json:"observations_over_limit"`
	FetchLookups      int64            `json:"fetch_lookups_skipped"` // get_peers from the node of a fetch on the same --dht-state: not recorded (ownlookups.go)
	RepeatsDropped    int64            `json:"repeats_dropped"`       // get_peers and announce_peer its sender sent within RepeatWindow of the one recorded: answered, not recorded (recent.go)
	HashCapDropped    int64            `json:"hash_cap_dropped"`      // get_peers of a hash past MaxSightingsPerHash in its RepeatWindow, over all senders: answered, not recorded (recent.go)
	HashCapEvicted    int64            `json:"hash_cap_evicted"`      // hashes the full cap table evicted before RepeatWindow ended: their get_peers are counted from 1 again (hashcap.go)
	RepeatEvicted     int64            `json:"repeat_window_evicted"` // (sender, hash) pairs the full recent set evicted before RepeatWindow ended: their repeats are recorded again (recent.go)
	Seconds           float64          `json:"seconds"`
	StopReason        string           `json:"stop_reason"`
}
