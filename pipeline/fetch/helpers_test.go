package fetch

import (
	"bytes"
	"context"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/tools/badpeers"
)

// Test timeouts. An outcome must come from what the peers do, not from how
// fast a loaded machine (or -race) runs the exchange, so the only timeout
// meant to fire is the peer timeout that ends a stalling peer.
const (
	// stallTimeout ends a stalling peer and must not end any other: an
	// exchange with a loopback badpeers peer takes milliseconds, and
	// 3 s leaves a machine at load 16 under -race a wide margin (500 ms
	// and 2 s have been seen to fail there).
	stallTimeout = 3 * time.Second
	// backstop bounds what ends by itself (jobs, dials, exchanges that
	// end by hanging up); it only fires when the code under test hangs.
	backstop = time.Minute
)

// testOptions are options for loopback tests: no DHT, the stall timeout
// per peer and backstops elsewhere.
func testOptions() Options {
	o := DefaultOptions()
	o.Timeout = backstop
	o.PeerTimeout = stallTimeout
	o.ConnectTimeout = backstop
	o.DHTListen = "127.0.0.1:0"
	o.DHTQueryRate = 0
	o.Progress = 0
	return o
}

func newFetcher(t testing.TB, o Options) *Fetcher {
	t.Helper()
	f, err := NewFetcher(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

func startPeer(t *testing.T, b badpeers.Behaviour, ts ...badpeers.Torrent) *badpeers.Peer {
	t.Helper()
	p, err := badpeers.Start(b, badpeers.Config{})
	if err != nil {
		t.Fatal(err)
	}
	p.Add(ts...)
	t.Cleanup(func() { p.Close() })
	return p
}

// checkResult checks what every result must satisfy whatever its outcome.
func checkResult(t *testing.T, job schema.Job, r schema.Result) {
	t.Helper()
	if r.InfoHash != job.InfoHash || r.Attempt != job.Attempt || r.LeaseID != job.LeaseID {
		t.Errorf("identity not copied: %x/%d/%q from job %x/%d/%q", r.InfoHash, r.Attempt, r.LeaseID, job.InfoHash, job.Attempt, job.LeaseID)
	}
	if _, known := precedence[r.Outcome]; !known && r.Outcome != schema.OutcomeOK && r.Outcome != schema.OutcomePeersPenalised {
		t.Errorf("unknown outcome %q", r.Outcome)
	}
	if r.Outcome == schema.OutcomeOK {
		// The result's info_hash_v2 is the proven hash: it refutes
		// nothing.
		if typ, v2, refuted, ok := verifyInfo(r.InfoBytes, r.InfoHash, r.InfoHashV2); !ok || refuted || typ != r.HashType || !bytes.Equal(v2, r.InfoHashV2) || r.MetadataSize != int64(len(r.InfoBytes)) || r.ServedBy == "" {
			t.Errorf("ok result without verified info bytes: %+v", r)
		}
		if r.NameUTF8Valid == nil || r.Private == nil || r.Files == nil || r.FileCount == nil || int(*r.FileCount) != len(r.Files) {
			t.Errorf("ok result with null metadata: name_utf8_valid %v, private %v, files %v, file_count %v",
				r.NameUTF8Valid, r.Private, r.Files, r.FileCount)
		}
	} else if r.Detail == "" {
		t.Errorf("%s result without detail", r.Outcome)
	} else if !reflect.DeepEqual(r.ResultMeta, schema.ResultMeta{}) {
		// Nothing is known of the torrent: every metadata column is null
		// (files was [], name_utf8_valid and private false).
		t.Errorf("%s result with metadata: %+v", r.Outcome, r.ResultMeta)
	}
	// served_by names the peer the row's timings come from: set
	// exactly when the deciding peer's connect_ms is.
	if (r.ServedBy != "") != (r.ConnectMs != nil) {
		t.Errorf("%s: served_by %q with connect_ms %s: want both set or both NULL", r.Outcome, r.ServedBy, msText(r.ConnectMs))
	}
	if r.AttemptedAt == 0 || r.TotalMs == nil || *r.TotalMs < 0 || int(r.PeersTried) > int(r.PeersFound) {
		t.Errorf("bad bookkeeping: attempted_at %d total_ms %s tried %d found %d", r.AttemptedAt, msText(r.TotalMs), r.PeersTried, r.PeersFound)
	}
	checkStageTimings(t, r)
}

// msText renders a timing column as DuckDB would print it.
func msText(ms *int64) string {
	if ms == nil {
		return "NULL"
	}
	return strconv.FormatInt(*ms, 10)
}

// Outcomes whose deciding peer always completed the BEP 3 handshake
// (connect_ms set), and those no peer decided or whose peer never did
// (connect_ms null). The rest (handshake_failed, rejected, timeout,
// local_error) may be either, depending on where it failed. Likewise for
// the peer's BEP 10 extended handshake (extension_ms): extendedOutcomes
// always got through it (an invalid_metadata, for a message once
// metadata was asked for), unextendedOutcomes never did.
var (
	handshookOutcomes = []string{schema.OutcomeOK, schema.OutcomeNoExtension, schema.OutcomeNoUTMetadata,
		schema.OutcomeInvalidMetadata, schema.OutcomeHashMismatch, schema.OutcomeTooLarge}
	unconnectedOutcomes = []string{schema.OutcomeNoPeers, schema.OutcomeConnectFailed, schema.OutcomePeerLacksTorrent}
	extendedOutcomes    = []string{schema.OutcomeOK, schema.OutcomeNoUTMetadata, schema.OutcomeInvalidMetadata,
		schema.OutcomeHashMismatch, schema.OutcomeTooLarge}
	unextendedOutcomes = append([]string{schema.OutcomeNoExtension, schema.OutcomeHandshakeFailed}, unconnectedOutcomes...)
)

// checkStageTimings checks that an attempt's timings are null exactly
// when their stage did not run: metadata_ms is an ok result's alone,
// connect_ms as handshookOutcomes and unconnectedOutcomes say, and
// handshake_ms with it; extension_ms as extendedOutcomes and
// unextendedOutcomes say; verify_ms is set for ok, null for all but ok
// and invalid_metadata (the bytes may have matched). Timings are never
// negative, and a stage's part is no longer than the stage:
// handshake_ms <= connect_ms, extension_ms and verify_ms <= metadata_ms.
func checkStageTimings(t *testing.T, r schema.Result) {
	t.Helper()
	for _, ms := range []*int64{r.LookupMs, r.ConnectMs, r.HandshakeMs, r.ExtensionMs, r.MetadataMs, r.VerifyMs} {
		if ms != nil && *ms < 0 {
			t.Errorf("%s: negative timing: lookup_ms %s connect_ms %s handshake_ms %s extension_ms %s metadata_ms %s verify_ms %s",
				r.Outcome, msText(r.LookupMs), msText(r.ConnectMs), msText(r.HandshakeMs), msText(r.ExtensionMs),
				msText(r.MetadataMs), msText(r.VerifyMs))
		}
	}
	if ok := r.Outcome == schema.OutcomeOK; (r.MetadataMs != nil) != ok {
		t.Errorf("%s: metadata_ms %s, want it set for ok only", r.Outcome, msText(r.MetadataMs))
	}
	switch {
	case slices.Contains(handshookOutcomes, r.Outcome) && r.ConnectMs == nil:
		t.Errorf("%s: connect_ms NULL, want the deciding peer's handshake time", r.Outcome)
	case slices.Contains(unconnectedOutcomes, r.Outcome) && r.ConnectMs != nil:
		t.Errorf("%s: connect_ms %d, want NULL (no peer got through the handshake)", r.Outcome, *r.ConnectMs)
	}
	if (r.HandshakeMs != nil) != (r.ConnectMs != nil) {
		t.Errorf("%s: handshake_ms %s with connect_ms %s: want both set or both NULL", r.Outcome, msText(r.HandshakeMs), msText(r.ConnectMs))
	} else if r.HandshakeMs != nil && *r.HandshakeMs > *r.ConnectMs {
		t.Errorf("%s: handshake_ms %d over connect_ms %d, which includes it", r.Outcome, *r.HandshakeMs, *r.ConnectMs)
	}
	switch {
	case slices.Contains(extendedOutcomes, r.Outcome) && r.ExtensionMs == nil:
		t.Errorf("%s: extension_ms NULL, want the deciding peer's BEP 10 handshake time", r.Outcome)
	case slices.Contains(unextendedOutcomes, r.Outcome) && r.ExtensionMs != nil:
		t.Errorf("%s: extension_ms %d, want NULL (no peer got through the BEP 10 handshake)", r.Outcome, *r.ExtensionMs)
	case r.ExtensionMs != nil && r.HandshakeMs == nil:
		t.Errorf("%s: extension_ms %d without handshake_ms", r.Outcome, *r.ExtensionMs)
	}
	switch {
	case r.Outcome == schema.OutcomeOK && r.VerifyMs == nil:
		t.Errorf("ok: verify_ms NULL, want the hash check's time")
	case r.Outcome != schema.OutcomeOK && r.Outcome != schema.OutcomeInvalidMetadata && r.VerifyMs != nil:
		t.Errorf("%s: verify_ms %d, want NULL (no metadata matched)", r.Outcome, *r.VerifyMs)
	case r.VerifyMs != nil && r.ExtensionMs == nil:
		t.Errorf("%s: verify_ms %d without extension_ms", r.Outcome, *r.VerifyMs)
	}
	if r.MetadataMs != nil {
		for _, part := range []*int64{r.ExtensionMs, r.VerifyMs} {
			if part != nil && *part > *r.MetadataMs {
				t.Errorf("%s: extension_ms %s, verify_ms %s: over metadata_ms %d, which includes them", r.Outcome,
					msText(r.ExtensionMs), msText(r.VerifyMs), *r.MetadataMs)
			}
		}
	}
}
