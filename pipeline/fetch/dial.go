package fetch

import (
	"context"
	"net"

	"github.com/infohash/infohash/formats/schema"
)

// dial connects to addr (once cfg.guard lets it), counting the dial in
// connects and, when it connected, in connects_ok. A failure is
// connect_failed, or local_error (local) when our side failed.
func dial(ctx context.Context, addr string, cfg *exchangeConfig) (conn net.Conn, perr *PeerError, local bool) {
	cfg.Stats.connects.Add(1)
	var err error
	if cfg.guard != nil {
		err = cfg.guard("tcp", addr)
	}
	if err == nil {
		d := net.Dialer{Timeout: cfg.ConnectTimeout}
		conn, err = d.DialContext(ctx, "tcp", addr)
	}
	switch {
	case err == nil:
		cfg.Stats.connectsOK.Add(1)
		return conn, nil, false
	case isLocal(err):
		return nil, failf(schema.OutcomeLocalError, "dial: %v", err), true
	default:
		return nil, failf(schema.OutcomeConnectFailed, "dial: %v", err), false
	}
}

// countRetryDial counts a failed second dial of an exchange (see
// exchange's own count of its first): ours when ctx ended, else the
// peer's.
func countRetryDial(ctx context.Context, st *counters, local bool) {
	switch {
	case local:
		st.connectsLocal.Add(1)
	case ended(ctx) != nil:
		st.connectsCancelled.Add(1)
	default:
		st.connectsFailed.Add(1)
	}
}
