package schema

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"time"
)

// Hash is an infohash as it travels in the DHT: 20 bytes.
type Hash = [20]byte

// Hash types (column hash_type).
const (
	HashV1 int8 = 1 // BitTorrent v1: SHA-1 of the info dictionary
	HashV2 int8 = 2 // BitTorrent v2 (BEP 52): SHA-256, truncated to 20 bytes in info_hash
)

// Observation sources (column source).
const (
	SourceGetPeers         = "dht_get_peers"
	SourceAnnouncePeer     = "dht_announce_peer"
	SourceSampleInfohashes = "dht_sample_infohashes"
	SourceImport           = "import"
)

// Metadata statuses (column metadata_status).
const (
	StatusNew     = "new"
	StatusFetched = "fetched"
	StatusFailed  = "failed"
)

// Tiers (column tier).
const (
	TierHot  = "hot"
	TierCold = "cold"
)

// Observation is one sighting of an infohash: what capture emits and dedup
// reads.
type Observation struct {
	InfoHash   Hash   `parquet:"info_hash"`
	InfoHashV2 []byte `parquet:"info_hash_v2,optional"` // full 32-byte v2 hash when known
	HashType   int8   `parquet:"hash_type,int(8)"`
	ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
	Source     string `parquet:"source,dict"`
	NodeAddr   string `parquet:"node_addr,optional"` // sender ip:port; null for imports
	NodeID     []byte `parquet:"node_id,optional"`   // sender's 20-byte node ID
	PeerPort   int32  `parquet:"peer_port,optional"` // announced port (announce_peer); 0 = null
	RunID      string `parquet:"run_id,dict"`
}

// State is the durable record of one known infohash (the seeds'
// infohash_state): existence (first_seen, last_seen, seen_count), activity,
// metadata status and retry scheduling kept apart.
//
// Activity is an exponentially decayed count of observations, evaluated at
// last_seen: activity' = activity·2^(-(t-last_seen)/half_life) + 1 for an
// observation at t ≥ last_seen. It never depends on the wall clock.
type State struct {
	InfoHash       Hash    `parquet:"info_hash"`
	InfoHashV2     []byte  `parquet:"info_hash_v2,optional"`
	HashType       int8    `parquet:"hash_type,int(8)"`
	FirstSeen      int64   `parquet:"first_seen,timestamp(millisecond)"`
	LastSeen       int64   `parquet:"last_seen,timestamp(millisecond)"`
	SeenCount      int64   `parquet:"seen_count"`
	LastSource     string  `parquet:"last_source,dict"`
	Activity       float64 `parquet:"activity"`
	MetadataStatus string  `parquet:"metadata_status,dict"`
	Attempts       int32   `parquet:"attempts"`
	LastAttempt    int64   `parquet:"last_attempt,optional,timestamp(millisecond)"`
	LastFailure    string  `parquet:"last_failure,optional,dict"`
	NextRetry      int64   `parquet:"next_retry,optional,timestamp(millisecond)"`
	LeaseID        string  `parquet:"lease_id,optional"`
	LeaseUntil     int64   `parquet:"lease_until,optional,timestamp(millisecond)"`
	Tier           string  `parquet:"tier,dict"`
	// BackoffStep is the position in the failure class's backoff schedule
	// (how many counted failures the next delay is based on).
	BackoffStep int32 `parquet:"backoff_step"`
	// BadMetadata counts the distinct sources (peers) that served this
	// hash bad metadata (hash_mismatch, invalid_metadata) or claimed it
	// too large (too_large) since the last success.
	BadMetadata int32 `parquet:"bad_metadata"`
	// Reactivated is when a fresh observation last pulled a dormant hash
	// back (null if never).
	Reactivated int64 `parquet:"reactivated_at,optional,timestamp(millisecond)"`
	// AvoidPeers are endpoints (ip:port), most recent last. While
	// BadMetadata is 0, those that failed this hash with a penalising
	// class, kept while their penalty lasts; from the first bad-metadata
	// or too_large source to the next success, exactly those sources,
	// kept after their penalty ends so that a source is counted once
	// (merge). plan-retries hands a job the ones still penalised.
	AvoidPeers []string `parquet:"avoid_peers,list"`
	// Peers are endpoints (ip:port) that announced this hash
	// (announce_peer: the sender's address with the port it announced),
	// newest first, each once, at most MaxStatePeers: dedup puts a
	// batch's announcers before those already known, merge drops one
	// that failed the hash, plan-retries hands a job those not in its
	// live avoid_peers.
	Peers []string `parquet:"peers,list"`
	// FirstSource is the source of the sighting at FirstSeen (its
	// input's value, as last_source keeps it; at a tie, the greatest), so
	// a later commit's earlier sighting changes it with FirstSeen, and it
	// does not depend on how inputs were grouped into commits; "import"
	// for a row merge made for a fetch result, until an earlier sighting;
	// null ("") for rows made before dataset format 10 (unknown), until a
	// sighting at or before FirstSeen.
	FirstSource string `parquet:"first_source,optional,dict"`
	// LastFailureAt is when last_failure was set (the attempt's time),
	// null while last_failure is, and for rows older than format 10.
	LastFailureAt int64 `parquet:"last_failure_at,optional,timestamp(millisecond)"`
	// PeersAt is the provenance of Peers, whose only source is an
	// announcement (dht_announce_peer): the observed_at of the newest
	// one that put or kept an endpoint in Peers. merge dropping failed
	// endpoints leaves it (the newest of those kept is no later); null
	// while Peers is empty, and for rows older than dataset format 12.
	PeersAt int64 `parquet:"peers_at,optional,timestamp(millisecond)"`
	// InfoHashV2Source is the provenance of InfoHashV2: the source of the
	// observation whose claim dedup took (its input's value, as
	// last_source keeps it: "import" for a 64-hex line or a magnet's
	// btmh), V2SourceMetadata once a fetch's metadata proved it. Null
	// ("") while InfoHashV2 is, and for rows older than dataset format 12
	// (unknown).
	InfoHashV2Source string `parquet:"info_hash_v2_source,optional,dict"`
}

// V2SourceMetadata is State.InfoHashV2Source for a full v2 hash that a
// fetch's verified metadata proved (merge).
const V2SourceMetadata = "metadata"

// MaxStatePeers bounds State.Peers.
const MaxStatePeers = 8

// PeerFailure is one peer's failure during a fetch attempt.
type PeerFailure struct {
	Addr  string `parquet:"addr"`
	Class string `parquet:"class,dict"`
	At    int64  `parquet:"at,timestamp(millisecond)"`
}

// File is one file of a torrent. Path is a lossy UTF-8 rendering of the
// path elements joined by "/"; PathRaw keeps the untrusted bytes as sent.
type File struct {
	Path    string `parquet:"path"`
	PathRaw []byte `parquet:"path_raw"`
	Length  int64  `parquet:"length"`
}

// Job is one unit of fetch work, leased by plan-retries.
type Job struct {
	InfoHash Hash `parquet:"info_hash"`
	// InfoHashV2 is the full 32-byte v2 hash when the job's input gave
	// it (a 64-hex hash, a 32-byte info_hash, an info_hash_v2 column;
	// plan-retries gives the state's, else null). It is a claim, as
	// hash_type is: fetch accepts metadata that either hash proves to be
	// info_hash's, and one that does so otherwise than by this SHA-256
	// refutes it (the ok result carries the proven type and hash).
	InfoHashV2 []byte   `parquet:"info_hash_v2,optional"`
	HashType   int8     `parquet:"hash_type,int(8)"`
	Attempt    int32    `parquet:"attempt"`
	Reason     string   `parquet:"reason,dict"` // new, retry, reactivated, cold
	LeaseID    string   `parquet:"lease_id"`
	LeaseUntil int64    `parquet:"lease_until,timestamp(millisecond)"`
	Peers      []string `parquet:"peers,list"`       // peers that announced the hash (the state's, less penalised ones), ip:port
	AvoidPeers []string `parquet:"avoid_peers,list"` // penalised endpoints, ip:port
}

// Job reasons (column reason).
const (
	ReasonNew         = "new"
	ReasonRetry       = "retry"
	ReasonReactivated = "reactivated"
	ReasonCold        = "cold"
)

// Result is the outcome of one fetch attempt for one job.
//
// For outcome ok, hash_type is the type the metadata proved (SHA-1 of the
// info dictionary is info_hash: 1; the first 20 bytes of its SHA-256: 2,
// and info_hash_v2 is that SHA-256), whatever the job said; otherwise it
// is the job's, and info_hash_v2 is null. Its metadata columns
// (ResultMeta) are the torrent's for outcome ok, and null for every other.
//
// served_by is the peer (ip:port) this row's metadata_size and per-stage
// timings come from: for ok, the peer that served the verified metadata;
// for a failure, the peer whose class the outcome is once it got through
// the BEP 3 handshake (too_large: the peer that claimed metadata_size;
// hash_mismatch, invalid_metadata: the peer that sent the bytes), null
// when no peer did (no_peers, connect_failed, the job's timeout, ...).
// metadata_size is that peer's claim (BEP 10 metadata_size) for a
// failure, null when it made none, and the verified size for ok. Only an
// ok row's served_by goes into torrents; peer_failures, not served_by,
// is what merge penalises. Fetches before this wrote served_by for ok
// only.
//
// The timings are whole milliseconds, rounded down: a stage that ran in
// under a millisecond is 0, and a stage that did not run (or did not get
// through) is null, never 0, so that avg() over a column counts only the
// stages it timed. lookup_ms is how long the DHT lookup ran (until it
// ended or the attempt no longer needed it), null when fetch had no DHT
// node (--no-dht). connect_ms is how long the peer that decided the
// outcome (served_by) took from the dial to the end of the BEP 3
// handshake, null when no peer decided it (no_peers, the job's own
// timeout, a failed lookup, every
// peer avoided) or that peer never completed the BEP 3 handshake
// (connect_failed, peer_lacks_torrent, a handshake_failed there rather
// than in the BEP 10 handshake after it); handshake_ms is the part of it
// after the TCP connection (the BEP 3 handshake), set when connect_ms is.
// metadata_ms is how long that peer then took to serve verified
// metadata: for ok only, null for every failure. Two of its parts are
// columns of their own: extension_ms, from the end of the BEP 3
// handshake to the peer's BEP 10 extended handshake (null when the peer
// sent none that decodes: no_extension, handshake_failed, or a failure
// before it), and verify_ms, the hashing of the received info dictionary
// against the infohash (null unless it matched: ok, or invalid_metadata
// for bytes that match but are no info dictionary). total_ms is the whole
// attempt. Results written before these columns were nullable (required
// INT64) hold 0 where a stage did not run, and results written before
// handshake_ms, extension_ms and verify_ms lack them (read as null);
// merge reads both as they are (it uses no timing but total_ms).
//
// A released row (OutcomeReleased) is no attempt: all its timings are
// null, peers_found and peers_tried 0 and peer_failures empty.
type Result struct {
	InfoHash     Hash          `parquet:"info_hash"`
	InfoHashV2   []byte        `parquet:"info_hash_v2,optional"`
	HashType     int8          `parquet:"hash_type,int(8)"`
	Attempt      int32         `parquet:"attempt"`
	LeaseID      string        `parquet:"lease_id,optional"`
	AttemptedAt  int64         `parquet:"attempted_at,timestamp(millisecond)"`
	Outcome      string        `parquet:"outcome,dict"`
	Detail       string        `parquet:"detail,optional"`
	PeersFound   int32         `parquet:"peers_found"`
	PeersTried   int32         `parquet:"peers_tried"`
	PeerFailures []PeerFailure `parquet:"peer_failures,list"`
	LookupMs     *int64        `parquet:"lookup_ms,optional"`
	ConnectMs    *int64        `parquet:"connect_ms,optional"`
	MetadataMs   *int64        `parquet:"metadata_ms,optional"`
	TotalMs      *int64        `parquet:"total_ms,optional"`
	ServedBy     string        `parquet:"served_by,optional"`
	MetadataSize int64         `parquet:"metadata_size,optional"`
	ResultMeta
	HandshakeMs *int64 `parquet:"handshake_ms,optional"`
	ExtensionMs *int64 `parquet:"extension_ms,optional"`
	VerifyMs    *int64 `parquet:"verify_ms,optional"`
	// RetryAfter is, for outcome peers_penalised only, the earliest end of
	// the penalties that made the attempt skip every peer it found; null
	// (0) on every other row and in results written before it.
	RetryAfter int64 `parquet:"retry_after,optional,timestamp(millisecond)"`
}

// Meta is the decoded, verified metadata of a torrent, as the torrents
// table stores it (a result carries it as ResultMeta).
//
// A torrent's name can be empty and its size and file count 0: those are
// known values, so the fields are pointers (and NameRaw a non-nil empty
// slice) whose nil alone is null, unknown (not fetched; piece_length also
// when the info dictionary has none). Files written before this stored
// such zeros as null; KnownZeros reads them back as the zeros they were.
type Meta struct {
	Name          *string `parquet:"name,optional"`
	NameRaw       []byte  `parquet:"name_raw,optional"` // nil is null; empty (non-nil) is an empty name
	NameUTF8Valid bool    `parquet:"name_utf8_valid"`
	TotalSize     *int64  `parquet:"total_size,optional"`
	PieceLength   *int64  `parquet:"piece_length,optional"`
	FileCount     *int32  `parquet:"file_count,optional"`
	Files         []File  `parquet:"files,list"`
	Private       bool    `parquet:"private"`
	InfoBytes     []byte  `parquet:"info_bytes,optional"` // the verified bencoded info dictionary
}

// KnownZeros sets the null name, name_raw, total_size and file_count of
// metadata known whole (a torrents row, an ok result) to the zero values
// they stand for: infohash wrote those zeros as null before it told
// zero from unknown (the Parquet schema is the same). piece_length stays
// as it is: a null there may as well be a missing key.
func (m *Meta) KnownZeros() {
	if m.Name == nil {
		m.Name = new("")
	}
	if m.NameRaw == nil {
		m.NameRaw = []byte{}
	}
	if m.TotalSize == nil {
		m.TotalSize = new(int64(0))
	}
	if m.FileCount == nil {
		m.FileCount = new(int32(0))
	}
}

// NameOr returns the name, or "" when it is null.
func (m *Meta) NameOr() string {
	if m.Name == nil {
		return ""
	}
	return *m.Name
}

// Fetch outcomes (column outcome): ok, or exactly one failure class.
const (
	OutcomeOK              = "ok"
	OutcomeNoPeers         = "no_peers"
	OutcomeConnectFailed   = "connect_failed"
	OutcomeHandshakeFailed = "handshake_failed"
	OutcomeNoExtension     = "no_extension"
	OutcomeNoUTMetadata    = "no_ut_metadata"
	OutcomeRejected        = "rejected"
	OutcomeInvalidMetadata = "invalid_metadata"
	OutcomeHashMismatch    = "hash_mismatch"
	OutcomeTooLarge        = "too_large"
	OutcomeTimeout         = "timeout"
	OutcomeLocalError      = "local_error"
)

// OutcomePeerLacksTorrent is the failure class of a peer that does not
// serve the torrent asked for: it took our BEP 3 handshake, which names
// the infohash, and hung up without answering it, or answered for another
// infohash. It is a fact about one (peer, infohash) pair, not about the
// endpoint, so it never penalises the endpoint in DIR/peers/ (the policy
// refuses a peer_penalty.base for it): that peer may serve other hashes.
const OutcomePeerLacksTorrent = "peer_lacks_torrent"

// OutcomePeersPenalised is the outcome of an attempt that found peers
// but dialled none: every one was skipped as penalised for a failure of
// its own (perhaps with another hash), and at least one of those
// penalties was still running. It is no failure of the hash: merge defers
// the hash to the earliest end among those penalties (the result's
// retry_after) and counts no attempt. It is no failure class either.
const OutcomePeersPenalised = "peers_penalised"

// OutcomeReleased marks a result that is not an attempt: fetch read the
// job but stopped (SIGINT/SIGTERM, --deadline) before starting or
// finishing it, and gives its lease back so that the hash can be planned
// again at once instead of when lease_until passes. Such a row carries the
// job's info_hash, hash_type, attempt and lease_id, attempted_at is when
// the lease was released, and it has no peer data nor timings (see
// Result); merge ends the lease
// (when it is still the hash's) and changes nothing else. It is no
// failure class.
const OutcomeReleased = "released"

// Torrent is a fetched torrent's metadata as merge stores it
// (DIR/torrents/current/prefix=XX/).
type Torrent struct {
	InfoHash     Hash   `parquet:"info_hash"`
	HashType     int8   `parquet:"hash_type,int(8)"`
	FetchedAt    int64  `parquet:"fetched_at,timestamp(millisecond)"`
	ServedBy     string `parquet:"served_by,optional"`
	MetadataSize int64  `parquet:"metadata_size"`
	Meta
}

// PeerPenalty is a penalised peer endpoint (DIR/peers/).
type PeerPenalty struct {
	Addr     string `parquet:"addr"`
	Class    string `parquet:"class,dict"`
	Until    int64  `parquet:"until,timestamp(millisecond)"`
	Failures int32  `parquet:"failures"`
	LastAt   int64  `parquet:"last_at,timestamp(millisecond)"`
}

// Lease reserves a planned hash for one fetch job (DIR/leases/):
// plan-retries writes it in the commit that plans the job, merge removes it
// when the job's result is applied. A hash with a live lease is not planned
// again; once LeaseUntil passes it returns to the queue.
type Lease struct {
	InfoHash   Hash   `parquet:"info_hash"`
	LeaseID    string `parquet:"lease_id"`
	LeaseUntil int64  `parquet:"lease_until,timestamp(millisecond)"`
	Attempt    int32  `parquet:"attempt"`
	Reason     string `parquet:"reason,dict"`
	PlannedAt  int64  `parquet:"planned_at,timestamp(millisecond)"`
}

// FullV2 returns v2 when it is a full v2 hash of h (32 bytes, the first
// 20 of them h, as the DHT truncates it), else nil.
func FullV2(h Hash, v2 []byte) []byte {
	if len(v2) != 32 || !bytes.Equal(v2[:20], h[:]) {
		return nil
	}
	return v2
}

// Prefix returns the partition of h: its first byte.
func Prefix(h Hash) byte { return h[0] }

// PrefixDir is the Hive partition directory name of prefix p ("prefix=0a").
func PrefixDir(p byte) string { return fmt.Sprintf("prefix=%02x", p) }

// Hex renders h as 40 lowercase hex characters.
func Hex(h Hash) string { return hex.EncodeToString(h[:]) }

// ParseHex parses a 40-character (v1) or 64-character (v2, truncated to 20
// bytes) hex infohash. It returns the 20-byte hash, the full v2 bytes (nil
// for v1) and the hash type.
func ParseHex(s string) (h Hash, v2 []byte, typ int8, err error) {
	switch len(s) {
	case 40:
		_, err = hex.Decode(h[:], []byte(s))
		return h, nil, HashV1, wrapHex(s, err)
	case 64:
		v2 = make([]byte, 32)
		if _, err = hex.Decode(v2, []byte(s)); err != nil {
			return h, nil, 0, wrapHex(s, err)
		}
		copy(h[:], v2)
		return h, v2, HashV2, nil
	default:
		return h, nil, 0, fmt.Errorf("infohash %s: want 40 or 64 hex characters, got %d", Quote(s), len(s))
	}
}

func wrapHex(s string, err error) error {
	if err != nil {
		return fmt.Errorf("infohash %s: %w", Quote(s), err)
	}
	return nil
}

// Millis converts t to the schema's timestamp unit (0 for the zero time).
func Millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// Time converts a schema timestamp back to time.Time (zero for 0 / null).
func Time(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// Catalog is one row per known hash: its state joined with its metadata
// when fetched (export --table catalog), a selection of their columns: not
// the state's lease_id, lease_until, backoff_step, bad_metadata,
// reactivated_at, avoid_peers, peers and peers_at, nor the torrent's info_bytes (its
// hash_type is the state's, which merge sets from the metadata). Every
// network-derived field keeps its provenance: first_seen/first_source and
// last_seen/last_source for sightings, last_failure/last_failure_at for
// failures, info_hash_v2/info_hash_v2_source for a v2 hash, fetched_at/served_by for metadata (export's
// TestCatalogKeepsProvenance holds every column to this). The metadata
// columns (fetched_at to private) are null until the hash is fetched, and
// then hold what is known, an empty name and a size of 0 included (see
// Meta).
type Catalog struct {
	InfoHash       Hash    `parquet:"info_hash"`
	InfoHashV2     []byte  `parquet:"info_hash_v2,optional"`
	HashType       int8    `parquet:"hash_type,int(8)"`
	FirstSeen      int64   `parquet:"first_seen,timestamp(millisecond)"`
	LastSeen       int64   `parquet:"last_seen,timestamp(millisecond)"`
	SeenCount      int64   `parquet:"seen_count"`
	LastSource     string  `parquet:"last_source,dict"`
	Activity       float64 `parquet:"activity"`
	MetadataStatus string  `parquet:"metadata_status,dict"`
	Attempts       int32   `parquet:"attempts"`
	LastAttempt    int64   `parquet:"last_attempt,optional,timestamp(millisecond)"`
	LastFailure    string  `parquet:"last_failure,optional,dict"`
	NextRetry      int64   `parquet:"next_retry,optional,timestamp(millisecond)"`
	Tier           string  `parquet:"tier,dict"`
	FirstSource    string  `parquet:"first_source,optional,dict"`
	LastFailureAt  int64   `parquet:"last_failure_at,optional,timestamp(millisecond)"`
	// InfoHashV2Source is the state's: where info_hash_v2 came from.
	InfoHashV2Source string  `parquet:"info_hash_v2_source,optional,dict"`
	FetchedAt        int64   `parquet:"fetched_at,optional,timestamp(millisecond)"`
	ServedBy         string  `parquet:"served_by,optional"`
	MetadataSize     int64   `parquet:"metadata_size,optional"`
	Name             *string `parquet:"name,optional"`
	NameRaw          []byte  `parquet:"name_raw,optional"`
	NameUTF8Valid    *bool   `parquet:"name_utf8_valid"`
	TotalSize        *int64  `parquet:"total_size,optional"`
	PieceLength      *int64  `parquet:"piece_length,optional"`
	FileCount        *int32  `parquet:"file_count,optional"`
	Files            []File  `parquet:"files,optional,list"` // nil (null) until fetched; a fetched torrent's may be empty
	Private          *bool   `parquet:"private"`
}
