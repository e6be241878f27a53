package fetch

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"

	"github.com/infohash/infohash/formats/schema"
)

// precedence ranks the failure classes: when the peers of one attempt fail
// differently, the attempt's outcome is the class ranked highest here.
// Evidence about the metadata itself outranks evidence about one peer,
// which outranks the absence of evidence (too_large is one peer's claim,
// but it ranks high so that merge sees it and can count distinct peers
// making it; one peer's claim alone only penalises that peer):
//
//	hash_mismatch > too_large > invalid_metadata
//	  > rejected > no_ut_metadata > no_extension > handshake_failed
//	  > peer_lacks_torrent > local_error > timeout > connect_failed > no_peers
//
// Among the peer-level classes, the one that got further through the
// exchange wins; peer_lacks_torrent (the peer took our handshake and
// would not serve this infohash) ranks below handshake_failed, which
// blames the peer itself. local_error outranks timeout and connect_failed: when our
// side failed too, an inconclusive attempt must not count against the hash.
// timeout is a peer's own (no answer within PeerTimeout: listed against
// it in peer_failures) or the job's (Options.Timeout or the lease passed,
// which counts only when it left found peers untried or cut off
// mid-exchange, and is listed against no peer: only a peer's own limits
// blame it). An attempt that found no peer before the job's deadline is
// no_peers, not timeout.
var precedence = map[string]int{
	schema.OutcomeHashMismatch:     12,
	schema.OutcomeTooLarge:         11,
	schema.OutcomeInvalidMetadata:  10,
	schema.OutcomeRejected:         9,
	schema.OutcomeNoUTMetadata:     8,
	schema.OutcomeNoExtension:      7,
	schema.OutcomeHandshakeFailed:  6,
	schema.OutcomePeerLacksTorrent: 5,
	schema.OutcomeLocalError:       4,
	schema.OutcomeTimeout:          3,
	schema.OutcomeConnectFailed:    2,
	schema.OutcomeNoPeers:          1,
}

// Outranks reports whether failure class a takes precedence over b.
func Outranks(a, b string) bool { return precedence[a] > precedence[b] }

// Classes lists the failure classes from highest to lowest precedence.
func Classes() []string {
	return []string{
		schema.OutcomeHashMismatch, schema.OutcomeTooLarge, schema.OutcomeInvalidMetadata,
		schema.OutcomeRejected, schema.OutcomeNoUTMetadata, schema.OutcomeNoExtension,
		schema.OutcomeHandshakeFailed, schema.OutcomePeerLacksTorrent, schema.OutcomeLocalError, schema.OutcomeTimeout,
		schema.OutcomeConnectFailed, schema.OutcomeNoPeers,
	}
}

// PeerError is one peer's failure during an exchange, with its class.
type PeerError struct {
	Class  string // a failure class (schema.Outcome*)
	Detail string // what happened, for humans
}

func (e *PeerError) Error() string { return e.Class + ": " + e.Detail }

func failf(class, format string, args ...any) *PeerError {
	return &PeerError{Class: class, Detail: fmt.Sprintf(format, args...)}
}

// IsClass reports whether err is a *PeerError of the given class.
func IsClass(err error, class string) bool {
	var pe *PeerError
	return errors.As(err, &pe) && pe.Class == class
}

// isLocal reports whether a network error is our side's fault: out of
// file descriptors, buffers or ephemeral ports.
func isLocal(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.ENOMEM) ||
		errors.Is(err, syscall.EADDRNOTAVAIL)
}

// isTimeout reports whether err is an I/O deadline or timeout.
func isTimeout(err error) bool {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// ioFailure classifies a read or write error met at a given stage of the
// exchange: a deadline is a timeout, our own resource exhaustion is a local
// error, anything else (EOF, reset) is the peer giving up, reported as
// class onClose.
func ioFailure(err error, onClose, stage string) *PeerError {
	switch {
	case isTimeout(err):
		return failf(schema.OutcomeTimeout, "no answer %s", stage)
	case isLocal(err):
		return failf(schema.OutcomeLocalError, "%s: %v", stage, err)
	default:
		return failf(onClose, "connection lost %s: %v", stage, err)
	}
}
