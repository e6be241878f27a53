// Package fetch is the metadata stage:
//
//	capture → dedup → plan-retries → [fetch] → merge → export
//
// It reads jobs (formats/schema.Job), finds peers for each infohash in the
// job's peers column, in Options.Peers and through get_peers lookups on its
// own anacrolix/dht node (which never announces; with Options.DHTState it
// starts from the nodes the previous run saved: dhtnode.go, dhtstate.go;
// each lookup is a walk of package dhtwalk, which takes the first 16
// nodes and 100 values of a reply),
// skips the peers out of the run's reach (internal/reach: it dials and
// queries public IPv4 addresses, and loopback or private ones only when
// the run was pointed there; a named peer always), the job's
// avoid_peers and the jobs file's avoid list (schema.AvoidPeersKey, for
// every job: see avoid.go), and ports of a public address past the
// eighth (maxPortsPerIP), and fetches the info
// dictionary over the wire protocol it speaks itself on anacrolix's
// peer_protocol and bencode packages (what it sends is written with
// formats/bencode's Encoder):
//
//	TCP connect → [MSE] → BEP 3 handshake (infohash must match) → BEP 10 extended
//	handshake (ut_metadata id, metadata_size ≤ cap) → BEP 9 requests for
//	every 16 KiB piece → SHA-1 (v1) or truncated SHA-256 (v2) of the bytes
//	must equal the infohash, whichever the job's hash_type said (a job's
//	full v2 hash is a claim too: bytes proving the infohash otherwise
//	refute it, counted in v2_claims_refuted); the result's hash_type and
//	info_hash_v2 say which did → info dictionary decoded.
//
// MSE is message stream encryption (encrypt.go, on anacrolix's mse
// package; Options.Encryption): by default a peer that hangs up on the
// plaintext handshake before a byte of its own (as peers requiring
// encryption do), or answers with something else, is dialled again once
// over MSE within its PeerTimeout, our BEP 3 handshake as MSE's initial
// payload. Of the two tries the one that tells more decides (settle): a
// peer that hangs up both ways stays peer_lacks_torrent, one whose MSE
// answer is garbage is handshake_failed. A run remembers the way each
// endpoint spoke (ways.go): it speaks to it that way first, and does not
// retry the other way for its hang-ups.
//
// Every peer exchange ends ok or in exactly one failure class, decided by
// how far it got: connect_failed, peer_lacks_torrent (the peer took our
// handshake, which names the infohash, and hung up without answering it,
// or answered for another infohash: it does not serve this torrent, which
// says nothing about the others it may serve), handshake_failed (wrong
// protocol, a hang-up after answering for our infohash or before our
// handshake was sent whole, or an extended handshake that does not decode
// or is preceded by a message that does not), no_extension, no_ut_metadata (or
// no metadata_size), too_large, rejected (a reject, a hang-up after
// agreeing to serve, or a piece past the share of Options.MetadataMemory
// that the exchanges with the peer's address may hold), invalid_metadata (an undecodable or oversized
// message once metadata was asked for, a wrong-sized piece, or verified
// bytes that are no valid info dictionary, a key repeated in any of its
// dictionaries, a meta version above 2 or not an integer, and a hybrid
// whose files and file tree differ included, or none of the version of the hash they matched:
// under a v2 hash, a dictionary without meta version 2 and a file tree;
// under a v1 hash, one without a length or files: infodict.ParseAs), hash_mismatch,
// timeout (no answer within the peer's time; the job's running out
// blames no peer, see below) and local_error
// (our side: out of descriptors, ports or buffers). Peers are tried
// Options.PeersPerHash at a time; a failure moves on to the next peer, and
// the first verified metadata ends the attempt.
//
// A failed attempt's outcome is the failure ranked highest (see Outranks):
//
//	hash_mismatch > too_large > invalid_metadata > rejected > no_ut_metadata
//	  > no_extension > handshake_failed > peer_lacks_torrent > local_error
//	  > timeout > connect_failed > no_peers
//
// where the job's own timeout counts as timeout only when it left found
// peers untried or cut off mid-exchange (an attempt that had found no
// peer at all by then is no_peers: nobody has the hash, which the
// scheduler keeps apart from peers that did not answer in time), and a
// DHT lookup that no node answered counts as local_error. An attempt
// that would be no_peers but found peers it skipped as penalised is
// rejected instead: a peer-level failure, retried soon, not one against
// the swarm. Every peer's failure except local errors is listed in the
// result's peer_failures, so the scheduler can penalise endpoints rather
// than swarms (a peer_lacks_torrent entry records the pair and penalises
// no endpoint). Only a peer's own limits (Options.PeerTimeout and
// ConnectTimeout) make its timeout or connect_failed a failure of its: an
// exchange the job's deadline (Options.Timeout, or the lease) cuts off is
// not listed, as the peer did not fail, we stopped waiting. Metadata that hashes to the infohash but
// is no valid info dictionary is the hash's fault, not the peer's: the
// result is invalid_metadata, but peer_failures does not list the peer
// that served it (it served exactly what the infohash names).
//
// A result's peers_tried counts the peers that gave their answer: served,
// failed, or ended by their own ConnectTimeout or PeerTimeout. A peer the
// job's deadline cut off, one stopped because another served or the
// metadata was found bad, and one our side failed (local_error) are not
// tried: the scheduler reads peers_tried < peers_found as peers left to
// try, and backs a hash off for a repeated peer-level failure only when
// every peer found was tried.
//
// A run that stops early (its context ends, or Options.Deadline passes)
// gives back the leases of the jobs it read and did not attempt: each gets
// a result of outcome schema.OutcomeReleased, which merge turns into the
// end of the lease (release.go). Jobs it never read keep their lease until
// it runs out, as do those of a run that is killed outright.
//
// Peer input is decoded defensively: messages are bounded in length,
// bencode is checked by a non-recursive scanner with a depth limit before
// the reflective decoder sees it, the metadata size is capped, and so are
// the metadata bytes all exchanges hold at once (Options.MetadataMemory),
// and those of one remote address (membudget.go).
package fetch
