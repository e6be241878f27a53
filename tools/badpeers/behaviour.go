package badpeers

// Behaviour is how a peer misbehaves.
type Behaviour string

// The behaviours, each with the fetch outcome it causes when it is a
// hash's only peer.
const (
	Good      Behaviour = "good"       // serves the torrents added to it: ok
	Refuse    Behaviour = "refuse"     // refuses TCP connections: connect_failed
	WrongHash Behaviour = "wrong_hash" // handshakes for another infohash: peer_lacks_torrent
	Close     Behaviour = "close"      // reads the handshake and closes: peer_lacks_torrent
	// NotBitTorrent reads the handshake and answers with something that
	// is no BitTorrent handshake: handshake_failed (the endpoint's fault,
	// unlike a peer that only lacks the torrent).
	NotBitTorrent Behaviour = "not_bittorrent"
	NoExtension   Behaviour = "no_extension"   // handshake without the BEP 10 bit: no_extension
	NoUTMetadata  Behaviour = "no_ut_metadata" // BEP 10 without ut_metadata: no_ut_metadata
	Reject        Behaviour = "reject"         // rejects every metadata request: rejected
	WrongTorrent  Behaviour = "wrong_torrent"  // serves another torrent's metadata: hash_mismatch
	TooLarge      Behaviour = "too_large"      // announces metadata above the cap: too_large
	Stall         Behaviour = "stall"          // accepts and never answers: timeout
	Garbage       Behaviour = "garbage"        // answers requests with undecodable messages: invalid_metadata
	// BadExtHandshake sends an undecodable BEP 10 extended handshake:
	// handshake_failed (the peer's fault, not the metadata's).
	BadExtHandshake Behaviour = "bad_ext_handshake"
	// MSEGarbage answers whatever it is sent with 1 KiB of bytes that
	// are neither a BitTorrent handshake nor an MSE answer:
	// handshake_failed, in plaintext and over MSE.
	MSEGarbage Behaviour = "mse_garbage"
	// RequireMSE serves the torrents added to it, as Good does, but only
	// over MSE (message stream encryption): it hangs up on a plaintext
	// handshake, as clients set to require encryption do. ok with
	// fetch's default --encryption; peer_lacks_torrent with
	// --encryption off. Not in Behaviours, whose others all fail.
	RequireMSE Behaviour = "require_mse"
)

// Behaviours lists every behaviour, Good first.
func Behaviours() []Behaviour {
	return []Behaviour{Good, Refuse, WrongHash, Close, NoExtension, NoUTMetadata, Reject,
		WrongTorrent, TooLarge, Stall, Garbage, BadExtHandshake, NotBitTorrent, MSEGarbage}
}

// Expect is the fetch outcome (a schema.Outcome* value) of a job whose
// only peer behaves as b.
func (b Behaviour) Expect() string {
	switch b {
	case Good, RequireMSE:
		return "ok"
	case Refuse:
		return "connect_failed"
	case WrongHash, Close:
		return "peer_lacks_torrent"
	case BadExtHandshake, NotBitTorrent, MSEGarbage:
		return "handshake_failed"
	case NoExtension:
		return "no_extension"
	case NoUTMetadata:
		return "no_ut_metadata"
	case Reject:
		return "rejected"
	case WrongTorrent:
		return "hash_mismatch"
	case TooLarge:
		return "too_large"
	case Stall:
		return "timeout"
	case Garbage:
		return "invalid_metadata"
	}
	return ""
}
