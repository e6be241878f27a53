package fetch

import (
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"

	"github.com/infohash/infohash/formats/schema"
)

// maxDebugPeers bounds the peers one attempt's debug record lists.
const maxDebugPeers = 16

// debugAttempt logs one job's attempt at debug level (--debug): its
// outcome and why, the peers found, avoided, out of reach, dialled,
// tried (those that gave their answer: the result's peers_tried) and cut
// off by the job's deadline (the dialled peers neither tried nor cut off
// were stopped by us or failed on our side), each failed peer with its
// class and why, the DHT lookup and the attempt's
// durations: those of the stages that ran, a null timing column (see
// schema.Result) being left out rather than logged as 0. Nothing is built
// unless debug records are on.
func (f *Fetcher) debugAttempt(ctx context.Context, job schema.Job, a *attempt, res *schema.Result) {
	log := f.opts.Logger
	if log == nil || !log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	attrs := []any{"info_hash", hex.EncodeToString(job.InfoHash[:]), "attempt", job.Attempt, "outcome", res.Outcome}
	if res.Detail != "" {
		attrs = append(attrs, "detail", res.Detail)
	}
	attrs = append(attrs, "peers_found", res.PeersFound, "peers_avoided", a.avoided, "peers_out_of_reach", a.outOfReach,
		"peers_dialled", a.dialled, "peers_tried", res.PeersTried, "peers_cut_off", a.cutOff)
	if len(a.outcomes) > 0 {
		var failed []string
		for i, o := range a.outcomes {
			if i == maxDebugPeers {
				failed = append(failed, fmt.Sprintf("… %d more", len(a.outcomes)-i))
				break
			}
			failed = append(failed, fmt.Sprintf("%s %s (%s)", o.Addr, o.Err.Class, schema.EscapeInvalidUTF8(o.Err.Detail)))
		}
		attrs = append(attrs, "peers_failed", strings.Join(failed, ", "))
	}
	if res.ServedBy != "" {
		attrs = append(attrs, "served_by", res.ServedBy, "metadata_size", res.MetadataSize)
	}
	if l := a.lookup; l != nil {
		attrs = append(attrs, "dht_queried", l.queried, "dht_responses", l.responses)
	}
	for _, c := range []struct {
		key string
		ms  *int64
	}{{"lookup_ms", res.LookupMs}, {"connect_ms", res.ConnectMs}, {"handshake_ms", res.HandshakeMs}, {"extension_ms", res.ExtensionMs},
		{"metadata_ms", res.MetadataMs}, {"verify_ms", res.VerifyMs}, {"total_ms", res.TotalMs}} {
		if c.ms != nil {
			attrs = append(attrs, c.key, *c.ms)
		}
	}
	log.Debug("fetch: attempt", attrs...)
}
