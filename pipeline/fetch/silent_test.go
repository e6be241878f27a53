package fetch

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/tools/badpeers"
)

// TestSilentDHTIsPartial: a run whose DHT never answered the bootstrap (a
// router, or a saved node, nobody answers on, 127.0.0.1) and whose jobs needed lookups it
// could not make ends partial (exit 3), saying why in its error, its
// results written (local_error, held against no hash): an outage is not
// a run that worked. Jobs that needed no lookup (their own peer served
// them), a run set up without a DHT or with nobody to ask (--bootstrap ""
// and no saved node), and a DHT that answered but knew no peer
// (no_peers) end 0.
func TestSilentDHTIsPartial(t *testing.T) {
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := c.LocalAddr().String() // closed: nobody answers there
	c.Close()
	tor := badpeers.NewTorrent(11, 1, 10)
	good := startPeer(t, badpeers.Good, tor)
	lonely := schema.Job{InfoHash: schema.Hash{0x51, 1}, HashType: schema.HashV1}
	expired := schema.Job{InfoHash: schema.Hash{0x53, 3}, HashType: schema.HashV1, Attempt: 1, LeaseID: "L1",
		LeaseUntil: time.Now().Add(-time.Hour).UnixMilli()}
	for _, tt := range []struct {
		name      string
		bootstrap []string // nil: no DHT (--no-dht); empty: --bootstrap "" with a --dht-state
		saved     bool     // the --dht-state holds a saved node (dead's)
		jobs      []schema.Job
		code      int
		outcome   string // of every job attempted (all but an expired lease's)
		why       string // in the error; "" when none
	}{
		{"DHT silent, lookups needed", []string{dead}, false, []schema.Job{lonely, {InfoHash: schema.Hash{0x52, 2}, HashType: schema.HashV1}},
			exitcode.Partial, schema.OutcomeLocalError, "no DHT node answered the bootstrap (check the network and --bootstrap): 2 of 2 lookups failed"},
		{"DHT silent, a lease expired", []string{dead}, false, []schema.Job{lonely, expired}, exitcode.Partial, schema.OutcomeLocalError,
			"expired; and no DHT node answered the bootstrap (check the network and --bootstrap): 1 of 1 lookups failed"},
		{"DHT silent, own peers served", []string{dead}, false, []schema.Job{{InfoHash: tor.InfoHash, HashType: schema.HashV1, Peers: []string{good.Addr()}}},
			exitcode.OK, schema.OutcomeOK, ""},
		{"no DHT, no peer source", nil, false, []schema.Job{lonely}, exitcode.OK, schema.OutcomeLocalError, ""},
		{"saved node silent", []string{}, true, []schema.Job{lonely}, exitcode.Partial, schema.OutcomeLocalError,
			"no DHT node answered the bootstrap (check the network and --bootstrap): 1 of 1 lookups failed"},
		{"DHT with nobody to ask", []string{}, false, []schema.Job{lonely}, exitcode.OK, schema.OutcomeLocalError, ""},
		{"DHT answered, no peers", []string{startSlowNode(t, 0, nil, nil)}, false, []schema.Job{lonely}, exitcode.OK, schema.OutcomeNoPeers, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			o := testOptions()
			o.Input, o.Output = filepath.Join(dir, "jobs.parquet"), filepath.Join(dir, "results.parquet")
			writeRows(t, o.Input, tt.jobs)
			o.Bootstrap, o.DHT = tt.bootstrap, tt.bootstrap != nil
			if o.DHT && len(o.Bootstrap) == 0 {
				o.DHTState = t.TempDir() // --bootstrap "" --dht-state DIR
			}
			if tt.saved {
				if err := saveDHTState(o.DHTState, [20]byte{0xab}, []savedNode{{ID: [20]byte{1}, Addr: mustAddrPort(t, dead)}}, time.Now()); err != nil {
					t.Fatal(err)
				}
			}
			if tt.saved || len(tt.bootstrap) > 0 && tt.bootstrap[0] == dead {
				// Nobody answers however long a query waits.
				o.DHTQueryTimeout = 300 * time.Millisecond
			}
			st, err := Run(context.Background(), o)
			if exitcode.Of(err) != tt.code {
				t.Fatalf("exit %d (%v), want %d", exitcode.Of(err), err, tt.code)
			}
			if tt.why != "" && (err == nil || !strings.Contains(err.Error(), tt.why)) {
				t.Errorf("error %v; want it to say %q", err, tt.why)
			}
			n := int64(len(tt.jobs)) - st.LeaseExpired
			if st.Attempted != n || st.Outcomes[tt.outcome] != n {
				t.Errorf("attempted %d, outcomes %v; want %d %s", st.Attempted, st.Outcomes, n, tt.outcome)
			}
			res := readResults(t, o.Output)
			for _, j := range tt.jobs {
				if r, ok := res[j.InfoHash]; j.LeaseID == "" && (!ok || r.Outcome != tt.outcome) {
					t.Errorf("%x: result %+v (%v); want written, %s", j.InfoHash, r.Outcome, ok, tt.outcome)
				}
			}
		})
	}
}
