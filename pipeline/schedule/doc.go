// Package schedule is infohash's retry policy: the one place that decides
// when a hash is tried again, which peers are skipped for a while, when a
// dormant hash wakes up and when a hash moves to the cold tier.
//
//	capture → dedup → plan-retries → fetch → merge → export
//	            │          │                    │
//	            │          └── Due, PriorityOf ─┤
//	            └── Reactivate           ApplyResultFailure, ApplySuccess,
//	                                     ApplyDeferral, PenalizePeer,
//	                                     ShouldArchive, ShouldArchiveDeferred
//
// Everything here is a pure function of a Policy, a *schema.State and
// timestamps passed in by the caller (int64 UTC milliseconds, as in
// formats/schema): no wall clock, no randomness, so a run with --now is
// reproducible and tests can simulate months in microseconds.
//
// The policy lives in the dataset as DIR/policy.json (Load, Save; Set
// changes one field by its JSON path, for `infohash policy set`) and its
// fingerprint (Policy.Hash) is recorded in each manifest. DIR/blocklist
// lists hashes that are never planned nor exported (LoadBlocklist). Cold
// rows are kept in their own files (ColdPrefix) in the same partitions;
// plan-retries reads them only in its sweep window (InColdWindow), which
// a cursor kept in the dataset moves on by one window per plan commit.
//
// Failure classes are the outcome constants of formats/schema. Each falls
// in one of five kinds (KindOf):
//
//   - swarm (no_peers, connect_failed, timeout): the swarm is unreachable;
//     every failure counts and moves one step along the class's backoff
//     schedule (default +30m, +2h, +8h, +1d, +7d, then +30d for ever).
//   - peer (handshake_failed, peer_lacks_torrent, no_extension,
//     no_ut_metadata, rejected): one endpoint misbehaved; it is penalised
//     (PenalizePeer) and the hash is retried soon (Policy.RetrySoon) with
//     other peers. A second soft failure in a row whose attempt tried
//     every peer it found (the result's peers_tried >= peers_found;
//     fetch counts a peer tried once it answered, not one the job's
//     deadline cut off) means every reachable peer is bad: the hash then
//     moves along its schedule like a swarm failure (ApplyResultFailure).
//     One that left found peers untried (the job's time ran out, and
//     fetch ranks a peer's class above timeout) is retried soon, like the
//     first.
//     Counts fetch never writes for a peer-level failure (peers_tried 0,
//     or null) are unknown and taken as every peer tried, as is a failure
//     given without them (ApplyFailureFrom). peer_lacks_torrent (the peer
//     does not serve this hash) is scheduled alike but never penalises
//     the endpoint, which may serve other hashes: the policy refuses a
//     peer_penalty.base for it.
//   - bad metadata (hash_mismatch, invalid_metadata): retried soon with
//     another peer; only repeats from distinct sources earn the long delay
//     of Policy.BadMetadata. Short of that, bad metadata after a soft
//     failure moves the hash along its schedule when its attempt tried
//     every peer it found, as a peer failure does; one that left found
//     peers untried (fetch dials on after a peer's hash_mismatch, so the
//     job's time can cut it) is retried soon. Once earned, a known source
//     failing it again keeps the hash at that delay (or its schedule's
//     step if longer), and so does a swarm or peer failure until a
//     success.
//   - too large: the peer's metadata_size is its own unchecked claim, so
//     like bad metadata it penalises that endpoint and the hash is retried
//     soon; once bad_metadata.sources distinct peers (default 2) have
//     served bad metadata or claimed too large, a too_large failure moves
//     the hash along backoff.too_large (default +30d).
//   - local: our own fault (disk, resources); retried soon and not counted
//     as an attempt. It leaves last_failure at the last counted failure, so
//     "a second soft failure in a row" looks past it.
//
// peers_penalised is no failure class: the attempt found peers but skipped
// every one as penalised (perhaps for another hash), so it says nothing of
// this hash. ApplyDeferral moves its next retry past the earliest of those
// penalties' ends (the result's retry_after), counts no attempt and leaves
// last_failure, the backoff step and the bad-metadata proof alone.
//
// Delays are multiplied by a jitter factor in [1-j, 1+j) derived from a
// hash of (info_hash, attempt, policy seed): reproducible, yet hashes that
// failed together wake spread apart.
package schedule
