package schedule

import "github.com/infohash/infohash/formats/schema"

// Kind groups failure classes that the policy treats alike.
type Kind int

// Failure kinds (see the package documentation).
const (
	KindUnknown     Kind = iota
	KindSwarm            // no_peers, connect_failed, timeout
	KindPeer             // handshake_failed, peer_lacks_torrent, no_extension, no_ut_metadata, rejected
	KindBadMetadata      // hash_mismatch, invalid_metadata
	KindTooLarge         // too_large
	KindLocal            // local_error
	KindDeferred         // peers_penalised: no failure (ApplyDeferral)
)

// FailureClasses lists every failure class (the schema's outcomes other
// than ok, released and peers_penalised, which fail no hash) in a fixed
// order.
func FailureClasses() []string {
	return []string{
		schema.OutcomeNoPeers, schema.OutcomeConnectFailed, schema.OutcomeTimeout,
		schema.OutcomeHandshakeFailed, schema.OutcomeNoExtension, schema.OutcomeNoUTMetadata,
		schema.OutcomeRejected, schema.OutcomeHashMismatch, schema.OutcomeInvalidMetadata,
		schema.OutcomeTooLarge, schema.OutcomeLocalError, schema.OutcomePeerLacksTorrent,
	}
}

// KindOf returns the kind of failure class c (KindUnknown for anything
// else, including "ok").
func KindOf(c string) Kind {
	switch c {
	case schema.OutcomeNoPeers, schema.OutcomeConnectFailed, schema.OutcomeTimeout:
		return KindSwarm
	case schema.OutcomeHandshakeFailed, schema.OutcomePeerLacksTorrent, schema.OutcomeNoExtension,
		schema.OutcomeNoUTMetadata, schema.OutcomeRejected:
		return KindPeer
	case schema.OutcomeHashMismatch, schema.OutcomeInvalidMetadata:
		return KindBadMetadata
	case schema.OutcomeTooLarge:
		return KindTooLarge
	case schema.OutcomeLocalError:
		return KindLocal
	case schema.OutcomePeersPenalised:
		return KindDeferred
	}
	return KindUnknown
}

// soft reports whether a class is retried soon rather than backed off:
// peer-level, bad-metadata and too_large failures (all blame a peer
// first).
func soft(c string) bool {
	k := KindOf(c)
	return k == KindPeer || k == KindBadMetadata || k == KindTooLarge
}

func (k Kind) String() string {
	switch k {
	case KindSwarm:
		return "swarm"
	case KindPeer:
		return "peer"
	case KindBadMetadata:
		return "bad_metadata"
	case KindTooLarge:
		return "too_large"
	case KindLocal:
		return "local"
	case KindDeferred:
		return "deferred"
	}
	return "unknown"
}
