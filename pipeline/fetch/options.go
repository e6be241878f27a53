package fetch

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/clock"
	"github.com/infohash/infohash/internal/dhtboot"
	"github.com/infohash/infohash/internal/progress"
	"github.com/infohash/infohash/internal/reach"
)

// DefaultMaxMetadataSize caps an info dictionary at 10 MiB, as magnetico
// and bitmagnet do.
const DefaultMaxMetadataSize = 10 << 20

// DefaultMetadataMemory bounds the metadata pieces all exchanges of a
// run hold at once. Real info dictionaries are tens of KiB, so honest
// peers never come near it; without it, peers that announce the maximum
// size and send that much garbage could make the default 100 jobs x 4
// peers hold 4 GiB.
const DefaultMetadataMemory = 256 << 20

// Options configure a fetch run. Peers come from the jobs' peers column,
// from Peers, and from DHT lookups when the run has a DHT node (DHTOn).
type Options struct {
	Input  string    // jobs: a Parquet file, or "-" for an Arrow IPC stream on Stdin
	Output string    // results: a Parquet file, or "-" for an Arrow IPC stream on Stdout
	Stdin  io.Reader // used when Input is "-"
	Stdout io.Writer // used when Output is "-"
	// OpenOutput opens Output when it is a file (nil:
	// fsutil.CreateOutput), so that the caller can watch a FIFO or
	// device that blocks.
	OpenOutput fsutil.Opener

	Peers     []string // extra peers (host:port) tried for every job
	Bootstrap []string // DHT bootstrap nodes (host:port); empty: none (see DHT)
	// DHT runs a DHT node without Bootstrap routers, from the nodes saved
	// in DHTState (--bootstrap "" with a warm state, as capture does).
	DHT          bool
	DHTListen    string  // UDP address of fetch's DHT node
	DHTQueryRate float64 // DHT queries per second; 0 = unlimited
	// DHTState is a directory where fetch keeps its DHT node ID and the
	// nodes that answered it between runs ("" = none; unused without a
	// DHT node). A run holds its lock (exit 75 for a second run on it)
	// and starts from the saved nodes, bootstrapping only when none of
	// them answers. Its files do not collide with capture's StateDir.
	DHTState string
	// StateSaver, if set, is handed a function that saves the DHT
	// state to DHTState at once, as the end of the run does, once the
	// node is up (not called without a DHT node or DHTState). It may be
	// called from any goroutine, and does nothing after the run's own
	// save: a caller that has to exit before Run returns (a stdout
	// nobody reads) calls it first, so that the next run starts warm.
	StateSaver func(save func())
	// DHTQueryTimeout is how long one DHT query waits for its answer
	// before the lookup counts the node as silent; 0 = 2 s (the DHT
	// library's default, a slow home line's round trip).
	DHTQueryTimeout time.Duration

	// AvoidPeers are endpoints skipped for every job until their time;
	// Run adds the jobs file's list (see schema.AvoidPeersKey).
	AvoidPeers []schema.AvoidedPeer

	Concurrency     int           // jobs in flight
	PeersPerHash    int           // peers tried at once for one job
	Timeout         time.Duration // per job, from start to outcome; cuts off exchanges without blaming their peers
	PeerTimeout     time.Duration // per peer exchange (capped by Timeout); a peer that hits it fails as timeout
	ConnectTimeout  time.Duration // per TCP dial; a peer that hits it fails as connect_failed
	Deadline        time.Duration // whole run, DHT bootstrap included; 0 = none. Unstarted jobs get a released row (see Run)
	MaxMetadataSize int64         // larger announced metadata fails as too_large
	// MetadataMemory bounds the metadata bytes received and not yet
	// verified, over all exchanges (at least MaxMetadataSize is always
	// allowed). A piece that would exceed it fails its exchange as
	// local_error: our limit, not the peer's fault nor the hash's. The
	// exchanges with one remote address hold at most the larger of
	// 2 x MaxMetadataSize and an eighth of it (when that is less than
	// all of it: see memBudget); a piece past that share fails its
	// exchange as rejected, a failure of that peer's.
	MetadataMemory int64
	// Encryption is when peers are spoken to over MSE (--encryption;
	// the zero value, EncryptionPreferPlain, is the default).
	Encryption Encryption

	// Clock stamps attempted_at and peer_failures.at, and decides whether
	// a lease (lease_until) or a penalty (avoid lists) has ended (the zero
	// Clock: the wall clock). Timeouts and rates take real time.
	Clock clock.Clock

	Logger   *slog.Logger  // progress and warnings; nil = silent
	Progress time.Duration // interval of progress log lines; 0 = none

	// guard, set by tests only, sees every TCP dial ("tcp") and DHT
	// datagram ("udp") the run would send, once the reach rule let it
	// through; an error refuses it without touching the network (a test
	// of that rule must not send anything off the host when it fails).
	guard func(network, addr string) error
	// passDeadline, set by tests only, is handed a function that ends
	// the run as Deadline passing does, for tests whose deadline must
	// pass at a point of the run (once its good job is done) rather than
	// after a time that a slow machine may outlast.
	passDeadline func(pass func())
	// leaseDeadline, set by tests only, is handed a leased job and the
	// wall-clock time at which the run's clock reads its lease_until,
	// and returns the deadline its attempt takes: a test checks where
	// the lease ends on the run's clock without waiting for it.
	leaseDeadline func(job schema.Job, deadline time.Time) time.Time
	// cutJob, set by tests only, is handed each attempt's job and a
	// function that ends the attempt as its Timeout passing does (cause
	// errJobDeadline), for tests that must cut an exchange off at a point
	// of it (once its peer is reached) rather than after a time that a
	// slow machine may outlast.
	cutJob func(job schema.Job, cut func())
}

// DefaultOptions suit a home line: 100 jobs at a time with up to 4 peers
// each keeps about 400 connections open, well inside what consumer
// routers track, and a 30 s budget per job lets a slow DHT lookup and a
// couple of slow peers finish. Bootstrap is empty here; the command line
// defaults it to the public routers.
func DefaultOptions() Options {
	return Options{
		DHTListen:       ":0",
		DHTQueryRate:    500,
		Concurrency:     100,
		PeersPerHash:    4,
		Timeout:         30 * time.Second,
		PeerTimeout:     15 * time.Second,
		ConnectTimeout:  5 * time.Second,
		MaxMetadataSize: DefaultMaxMetadataSize,
		MetadataMemory:  DefaultMetadataMemory,
		Progress:        progress.Interval, // as the other stages' progress lines
	}
}

// MaxConcurrency bounds --concurrency: workers and their queues are sized
// by it, and far past what a host's sockets allow it only exhausts memory.
const MaxConcurrency = 1 << 16

// MaxMetadataSizeLimit bounds MaxMetadataSize (--max-metadata-size): 1 GiB.
const MaxMetadataSizeLimit = 1 << 30

// Validate reports the first unusable option, naming it by its flag (an
// option that has none, by its field) and giving its value.
func (o *Options) Validate() error {
	switch {
	case o.Concurrency < 1 || o.Concurrency > MaxConcurrency:
		return fmt.Errorf("--concurrency: %d is outside 1-%d", o.Concurrency, MaxConcurrency)
	case o.PeersPerHash < 1:
		return fmt.Errorf("--peers-per-hash: %d is less than 1", o.PeersPerHash)
	case o.Timeout <= 0:
		return fmt.Errorf("--timeout: %v is not positive", o.Timeout)
	case o.PeerTimeout <= 0:
		return fmt.Errorf("--peer-timeout: %v is not positive", o.PeerTimeout)
	case o.ConnectTimeout <= 0:
		return fmt.Errorf("--connect-timeout: %v is not positive", o.ConnectTimeout)
	case o.Deadline < 0:
		return fmt.Errorf("--deadline: %v is negative", o.Deadline)
	case o.DHTQueryTimeout < 0:
		return fmt.Errorf("DHTQueryTimeout: %v is negative", o.DHTQueryTimeout)
	case o.MaxMetadataSize < 1 || o.MaxMetadataSize > MaxMetadataSizeLimit:
		return fmt.Errorf("--max-metadata-size: %d is outside 1-%d (1 GiB)", o.MaxMetadataSize, MaxMetadataSizeLimit)
	case o.MetadataMemory < 0:
		return fmt.Errorf("--metadata-memory: %d is negative", o.MetadataMemory)
	case o.Encryption < 0 || int(o.Encryption) >= len(encryptionNames):
		return fmt.Errorf("--encryption: %v is unknown", o.Encryption)
	}
	// Worded as the command line words it (app's flag checks): "" is a
	// free port on every address.
	if p := dhtboot.ListenProblem(o.DHTListen); o.DHTListen != "" && p != "" {
		return fmt.Errorf("--dht-listen: %s", p)
	}
	for _, p := range o.Peers {
		if _, _, err := net.SplitHostPort(p); err != nil {
			return fmt.Errorf("--peer: %q: %v", p, err)
		}
	}
	for _, b := range o.Bootstrap {
		if _, _, err := net.SplitHostPort(b); err != nil {
			return fmt.Errorf("--bootstrap: %q: %v", b, err)
		}
	}
	return nil
}

// reachOf is the rule of which addresses the run dials and queries
// (see internal/reach): public IPv4 addresses, and loopback or private
// ones when the run was pointed into their range: a loopback DHTListen,
// or a Bootstrap or Peers address in it. A host name counts as what it
// resolves to within resolveWait (all names at once; one that does not
// resolve by then points nowhere). A Peers endpoint is dialled whatever
// the rule says: the user named it (see attempt.add).
func (o Options) reachOf(ctx context.Context) reach.Rule {
	ctx, cancel := context.WithTimeout(ctx, resolveWait)
	defer cancel()
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		into []netip.AddrPort
	)
	for _, hp := range append(slices.Clip(o.Bootstrap), o.Peers...) {
		host, _, err := net.SplitHostPort(hp)
		if err != nil {
			continue
		}
		wg.Go(func() {
			// Only the address's range matters: no port.
			ips, _ := net.DefaultResolver.LookupNetIP(ctx, "ip4", host) // an IP address is no lookup
			mu.Lock()
			defer mu.Unlock()
			for _, a := range ips {
				into = append(into, netip.AddrPortFrom(a, 0))
			}
		})
	}
	wg.Wait()
	return reach.For(o.DHTListen, into)
}

// resolveWait bounds the name lookups of reachOf: the bootstrap routers'
// names are looked up again when the DHT node starts.
const resolveWait = 2 * time.Second

// DHTOn reports whether the run has a DHT node: bootstrap routers, or a
// DHT asked for with a --dht-state whose saved nodes it starts from (none
// answering, its lookups fail as local errors, which no hash is blamed
// for, rather than as no_peers).
func (o Options) DHTOn() bool { return len(o.Bootstrap) > 0 || (o.DHT && o.DHTState != "") }

// noSourceDetail is the detail of an attempt that had no peer source:
// why the run has no DHT node, and that neither --peer nor the job named
// a peer.
func (o Options) noSourceDetail() string {
	return "no peer source: " + o.noDHTFlags() + ", no --peer, and the job has no peers"
}

// noDHTFlags names the flags that left a run without a DHT node.
func (o Options) noDHTFlags() string {
	if o.DHT {
		return `--bootstrap "" without --dht-state`
	}
	return "--no-dht"
}
