package fetch

import (
	"context"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/tools/badpeers"
)

// testOptions are fast options for loopback tests: short timeouts, no DHT.
func testOptions() Options {
	o := DefaultOptions()
	o.Timeout = 2 * time.Second
	o.PeerTimeout = 2 * time.Second
	o.ConnectTimeout = time.Second
	o.DHTListen = "127.0.0.1:0"
	o.DHTQueryRate = 0
	o.Progress = 0
	return o
}

func newFetcher(t *testing.T, o Options) *Fetcher {
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
	if _, known := precedence[r.Outcome]; !known && r.Outcome != schema.OutcomeOK {
		t.Errorf("unknown outcome %q", r.Outcome)
	}
	if r.Outcome == schema.OutcomeOK {
		if schema.Hash(hashOf(r.InfoBytes, r.HashType)) != r.InfoHash || r.MetadataSize != int64(len(r.InfoBytes)) || r.ServedBy == "" {
			t.Errorf("ok result without verified info bytes: %+v", r)
		}
	} else if r.InfoBytes != nil || r.Detail == "" {
		t.Errorf("%s result with info bytes or without detail: %q", r.Outcome, r.Detail)
	}
	if r.AttemptedAt == 0 || r.TotalMs < 0 || int(r.PeersTried) > int(r.PeersFound) {
		t.Errorf("bad bookkeeping: attempted_at %d total_ms %d tried %d found %d", r.AttemptedAt, r.TotalMs, r.PeersTried, r.PeersFound)
	}
}
