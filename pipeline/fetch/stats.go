package fetch

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/metrics"
	"github.com/infohash/infohash/internal/plural"
)

// counters are the live stage counters, updated from many goroutines.
type counters struct {
	jobs, attempted, expired, unfinished        atomic.Int64
	released                                    atomic.Int64
	duplicates                                  atomic.Int64
	lookups, lookupsFailed, peersFound, avoided atomic.Int64
	outOfReach                                  atomic.Int64
	connects, connectsOK, connectsFailed        atomic.Int64
	connectsCancelled, connectsLocal            atomic.Int64
	handshakes, extensionSupport, extensionBad  atomic.Int64
	utMetadataSupport, metadataReceived         atomic.Int64
	verified, v2ClaimsRefuted                   atomic.Int64
	mseTried, mseOK, encryptionRetries          atomic.Int64

	mu           sync.Mutex
	outcomes     map[string]int64
	peerFailures map[string]int64
}

func newCounters() *counters {
	return &counters{outcomes: map[string]int64{}, peerFailures: map[string]int64{}}
}

func (c *counters) addOutcome(outcome string, failures []string) {
	c.mu.Lock()
	c.outcomes[outcome]++
	for _, f := range failures {
		c.peerFailures[f]++
	}
	c.mu.Unlock()
}

// unattempt moves the job of res, an attempt's result the output refused
// (a full disk), from attempted to unfinished: its outcome and peer
// failures, counted by Fetch, are taken back, as no row says so.
func (c *counters) unattempt(res schema.Result) {
	c.attempted.Add(-1)
	c.unfinished.Add(1)
	c.mu.Lock()
	c.outcomes[res.Outcome]--
	if c.outcomes[res.Outcome] == 0 {
		delete(c.outcomes, res.Outcome)
	}
	for _, pf := range res.PeerFailures {
		if c.peerFailures[pf.Class]--; c.peerFailures[pf.Class] == 0 {
			delete(c.peerFailures, pf.Class)
		}
	}
	c.mu.Unlock()
}

// Stats are the stage counters of a fetch run (stderr and --stats-json).
// Once the run has ended, Connects = ConnectsOK + ConnectsFailed +
// ConnectsCancelled + ConnectsLocalError. Each peer exchange counts in a
// stage only if it got through the one before, so Connects >= ConnectsOK
// >= Handshakes >= ExtensionSupport + ExtensionBad, and ExtensionSupport
// >= UTMetadata >= MetadataReceived >= Verified, whatever the peers do.
type Stats struct {
	// Jobs = Attempted + LeaseExpired + Unfinished: every job of the
	// input, including those a stopped run never read. Released is part
	// of Unfinished (Released <= Unfinished), and the Outcomes add up to
	// Attempted. A job whose result a full output refused counts as
	// unfinished, not attempted (its released row, if one fits, is
	// counted in Released).
	Jobs         int64 `json:"jobs"`          // jobs in the input
	Attempted    int64 `json:"attempted"`     // jobs with an attempt's result row
	LeaseExpired int64 `json:"lease_expired"` // neither attempted nor released: lease_until had passed
	Unfinished   int64 `json:"unfinished"`    // not attempted: the run stopped before starting or finishing them
	Released     int64 `json:"released"`      // of the unfinished, those with a released row the output kept (lease given back; the rest wait for lease_until)
	Duplicates   int64 `json:"duplicates"`    // input rows skipped, not jobs: their info_hash was an earlier row's

	Lookups            int64   `json:"lookups"`              // DHT get_peers traversals
	LookupsFailed      int64   `json:"lookups_failed"`       // traversals no DHT node answered, of attempts not ok (an ok one may cut its lookup short)
	PeersFound         int64   `json:"peers_found"`          // distinct peers per job, summed
	PeersAvoided       int64   `json:"peers_avoided"`        // skipped: listed in avoid_peers
	PeersOutOfReach    int64   `json:"peers_out_of_reach"`   // distinct peers per job not dialled: out of the run's reach (see internal/reach), a host name, or past maxPortsPerIP ports of one public address
	Connects           int64   `json:"connects"`             // TCP dials
	ConnectsOK         int64   `json:"connects_ok"`          // dials that connected
	ConnectsFailed     int64   `json:"connects_failed"`      // dials the peer failed: refused, unreachable, no answer within --connect-timeout or --peer-timeout
	ConnectsCancelled  int64   `json:"connects_cancelled"`   // dials we stopped: another peer won, the run stopped, or the job's deadline cut them off
	ConnectsLocalError int64   `json:"connects_local_error"` // dials that failed on our side (out of sockets or memory, no local address)
	Handshakes         int64   `json:"handshakes"`           // BitTorrent handshakes for the right infohash
	ExtensionSupport   int64   `json:"extension_support"`    // of those, peers whose BEP 10 extended handshake arrived and decoded
	ExtensionBad       int64   `json:"extension_bad"`        // of the handshakes, peers with the BEP 10 bit whose extended handshake (or a message before it) did not decode: not in extension_support
	UTMetadata         int64   `json:"ut_metadata"`          // of extension_support, peers announcing ut_metadata and a size
	MetadataReceived   int64   `json:"metadata_received"`    // complete info dictionaries received
	Verified           int64   `json:"verified"`             // of those, matching the infohash (a job may verify on two peers at once)
	V2ClaimsRefuted    int64   `json:"v2_claims_refuted"`    // of verified, those whose job's info_hash_v2 was wrong: the metadata proved the infohash v1, or v2 with another full hash
	MSEHandshakes      int64   `json:"mse_handshakes"`       // of connects_ok, MSE (encrypted) handshakes begun (--encryption)
	MSEHandshakesOK    int64   `json:"mse_handshakes_ok"`    // of those, completed: the peer knew the infohash (each then counts in handshakes if its BEP 3 one follows)
	EncryptionRetries  int64   `json:"encryption_retries"`   // peers dialled a second time the other way (MSE after a plaintext refusal, or plaintext after an MSE one)
	ElapsedMs          int64   `json:"elapsed_ms"`           // wall time of the run
	OKPerSec           float64 `json:"ok_per_sec"`           // ok results (jobs done, not Verified) per second of the run

	Outcomes     map[string]int64 `json:"outcomes"`      // attempts per outcome (ok, a failure class or peers_penalised; released rows are Released, not here)
	PeerFailures map[string]int64 `json:"peer_failures"` // peer_failures entries per class
}

func (c *counters) snapshot(elapsed time.Duration) Stats {
	s := Stats{
		Jobs: c.jobs.Load(), Attempted: c.attempted.Load(), LeaseExpired: c.expired.Load(),
		Unfinished: c.unfinished.Load(), Released: c.released.Load(), Duplicates: c.duplicates.Load(), Lookups: c.lookups.Load(), LookupsFailed: c.lookupsFailed.Load(),
		PeersFound: c.peersFound.Load(), PeersAvoided: c.avoided.Load(), PeersOutOfReach: c.outOfReach.Load(), Connects: c.connects.Load(),
		ConnectsOK: c.connectsOK.Load(), ConnectsFailed: c.connectsFailed.Load(),
		ConnectsCancelled: c.connectsCancelled.Load(), ConnectsLocalError: c.connectsLocal.Load(),
		Handshakes: c.handshakes.Load(), ExtensionSupport: c.extensionSupport.Load(), ExtensionBad: c.extensionBad.Load(),
		UTMetadata: c.utMetadataSupport.Load(), MetadataReceived: c.metadataReceived.Load(),
		Verified: c.verified.Load(), V2ClaimsRefuted: c.v2ClaimsRefuted.Load(), ElapsedMs: elapsed.Milliseconds(),
		MSEHandshakes: c.mseTried.Load(), MSEHandshakesOK: c.mseOK.Load(), EncryptionRetries: c.encryptionRetries.Load(),
		Outcomes: map[string]int64{}, PeerFailures: map[string]int64{},
	}
	c.mu.Lock()
	for k, v := range c.outcomes {
		s.Outcomes[k] = v
	}
	if elapsed > 0 {
		s.OKPerSec = float64(s.Outcomes[schema.OutcomeOK]) / elapsed.Seconds()
	}
	for k, v := range c.peerFailures {
		s.PeerFailures[k] = v
	}
	c.mu.Unlock()
	return s
}

// stoppedShort words how far a run that stopped short got, for its
// error: "1 job attempted, 2 jobs unfinished (2 leases released)" ("1
// jobs attempted" before).
func (s Stats) stoppedShort() string {
	return fmt.Sprintf("%s attempted, %s unfinished (%s released)", plural.Count(s.Attempted, "job", "jobs"),
		plural.Count(s.Unfinished, "job", "jobs"), plural.Count(s.Released, "lease", "leases"))
}

// WriteText writes the counters as a short human-readable report.
func (s Stats) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "fetch: %s", plural.Count(s.Jobs, "job", "jobs"))
	if s.Duplicates > 0 {
		fmt.Fprintf(&b, " (%s skipped)", plural.Count(s.Duplicates, "repeated row", "repeated rows"))
	}
	fmt.Fprintf(&b, ", %d attempted, %d lease expired, %d unfinished (%s released) in %.1fs (%.2f ok/s)\n",
		s.Attempted, s.LeaseExpired, s.Unfinished, plural.Count(s.Released, "lease", "leases"), float64(s.ElapsedMs)/1000, s.OKPerSec)
	fmt.Fprintf(&b, "  lookups %d (failed %d), peers found %d (avoided %d", s.Lookups, s.LookupsFailed, s.PeersFound, s.PeersAvoided)
	if s.PeersOutOfReach > 0 {
		fmt.Fprintf(&b, ", out of reach %d", s.PeersOutOfReach)
	}
	b.WriteString(")\n")
	fmt.Fprintf(&b, "  connects %d: ok %d, failed %d, cancelled %d, local errors %d; handshakes %d; BEP 10 %d (undecodable %d); ut_metadata %d\n",
		s.Connects, s.ConnectsOK, s.ConnectsFailed, s.ConnectsCancelled, s.ConnectsLocalError,
		s.Handshakes, s.ExtensionSupport, s.ExtensionBad, s.UTMetadata)
	if s.MSEHandshakes > 0 || s.EncryptionRetries > 0 {
		fmt.Fprintf(&b, "  MSE handshakes %d (completed %d); peers dialled again the other way %d\n",
			s.MSEHandshakes, s.MSEHandshakesOK, s.EncryptionRetries)
	}
	fmt.Fprintf(&b, "  metadata received %d, verified %d", s.MetadataReceived, s.Verified)
	if s.V2ClaimsRefuted > 0 {
		fmt.Fprintf(&b, " (%d refuting the job's v2 hash)", s.V2ClaimsRefuted)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "  outcomes: %s\n", formatCounts(s.Outcomes))
	fmt.Fprintf(&b, "  peer failures: %s\n", formatCounts(s.PeerFailures))
	_, err := io.WriteString(w, b.String())
	return err
}

func formatCounts(m map[string]int64) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, " ")
}

// MetricLabels names the labels of the map counters in --metrics-file
// (metrics.Labeler): every outcome and every class a peer can fail with
// is written, at 0 when no attempt or peer ended so.
func (Stats) MetricLabels() map[string]metrics.Label {
	return map[string]metrics.Label{
		"outcomes":      {Name: "outcome", Known: append([]string{schema.OutcomeOK, schema.OutcomePeersPenalised}, Classes()...)},
		"peer_failures": {Name: "class", Known: peerFailureClasses()},
	}
}

// peerFailureClasses lists the classes a peer_failures entry can have:
// every failure class but no_peers (no peer to blame) and local_error
// (our side's, never listed against a peer; see attempt.fill).
func peerFailureClasses() []string {
	var out []string
	for _, c := range Classes() {
		if c != schema.OutcomeNoPeers && c != schema.OutcomeLocalError {
			out = append(out, c)
		}
	}
	return out
}
