package merge

import "github.com/infohash/infohash/formats/schema"

// held is a result as prefixed keeps it until its partition is applied:
// every column but the metadata ones (schema.ResultMeta, 120 of a
// result's 368 bytes), which a row read for a run no longer carries
// then: a failed result's are dropped, an ok result's are in the spill
// (decodeResults). TestHeldKeepsEveryColumn checks that it has every
// other field of schema.Result.
type held struct {
	InfoHash     schema.Hash
	InfoHashV2   []byte
	HashType     int8
	Attempt      int32
	LeaseID      string
	AttemptedAt  int64
	Outcome      string
	Detail       string
	PeersFound   int32
	PeersTried   int32
	PeerFailures []schema.PeerFailure
	LookupMs     *int64
	ConnectMs    *int64
	MetadataMs   *int64
	TotalMs      *int64
	ServedBy     string
	MetadataSize int64
	HandshakeMs  *int64
	ExtensionMs  *int64
	VerifyMs     *int64
	meta         metaRef
}

// hold returns r as held; ok is false if r carries metadata (not in
// the spill), which held has no room for.
func hold(r *result) (h held, ok bool) {
	if r.Outcome == schema.OutcomeOK && !r.meta.spilled() {
		return held{}, false
	}
	return held{InfoHash: r.InfoHash, InfoHashV2: r.InfoHashV2, HashType: r.HashType, Attempt: r.Attempt,
		LeaseID: r.LeaseID, AttemptedAt: r.AttemptedAt, Outcome: r.Outcome, Detail: r.Detail, PeersFound: r.PeersFound,
		PeersTried: r.PeersTried, PeerFailures: r.PeerFailures, LookupMs: r.LookupMs, ConnectMs: r.ConnectMs,
		MetadataMs: r.MetadataMs, TotalMs: r.TotalMs, ServedBy: r.ServedBy, MetadataSize: r.MetadataSize,
		HandshakeMs: r.HandshakeMs, ExtensionMs: r.ExtensionMs, VerifyMs: r.VerifyMs, meta: r.meta}, true
}

// result returns the result h holds.
func (h *held) result() result {
	return result{Result: schema.Result{InfoHash: h.InfoHash, InfoHashV2: h.InfoHashV2, HashType: h.HashType,
		Attempt: h.Attempt, LeaseID: h.LeaseID, AttemptedAt: h.AttemptedAt, Outcome: h.Outcome, Detail: h.Detail,
		PeersFound: h.PeersFound, PeersTried: h.PeersTried, PeerFailures: h.PeerFailures, LookupMs: h.LookupMs,
		ConnectMs: h.ConnectMs, MetadataMs: h.MetadataMs, TotalMs: h.TotalMs, ServedBy: h.ServedBy,
		MetadataSize: h.MetadataSize, HandshakeMs: h.HandshakeMs, ExtensionMs: h.ExtensionMs, VerifyMs: h.VerifyMs},
		meta: h.meta}
}
