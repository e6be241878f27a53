package fetch

import (
	"context"
	"crypto/sha1"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/anacrolix/dht/v2/krpc"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/tools/badpeers"
)

// silentNode binds a UDP socket on loopback that never answers: a DHT
// node gone quiet, whose query a lookup waits out (DHTQueryTimeout).
func silentNode(t *testing.T) krpc.NodeAddr {
	t.Helper()
	conn, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ua := conn.LocalAddr().(*net.UDPAddr)
	return krpc.NodeAddr{IP: ua.IP.To4(), Port: ua.Port}
}

// TestJobDeadlineWithoutPeers: when the job's Timeout runs out while the
// DHT lookup is still going, an attempt whose lookup found no peer at
// all is no_peers (nobody has the hash: the swarm-level class the design
// keeps apart from peers that did not answer in time), not timeout. A
// found peer the deadline cut off mid-exchange still makes it timeout,
// and found peers all skipped as penalised make it peers_penalised (the
// job's avoid_peers, undated: a running penalty). It
// was timeout ("no peers found before the timeout") in the first and
// last cases. The lookup is held open past the deadline: its only
// bootstrap node answers get_peers at once (so the lookup is not
// local_error) with no peer, naming a node nearer the hash that never
// answers, whose query the lookup waits for (DHTQueryTimeout).
func TestJobDeadlineWithoutPeers(t *testing.T) {
	stall := startPeer(t, badpeers.Stall)
	penalised := startPeer(t, badpeers.Good)
	for i, tt := range []struct {
		name       string
		peers      []string // the job's peers
		avoid      []string // the job's avoid_peers
		want       string
		wantDetail string
	}{
		{"nobody announces it", nil, nil, schema.OutcomeNoPeers, "no peers found before the timeout; 1 DHT nodes answered"},
		{"its peer is cut off mid-exchange", []string{stall.Addr()}, nil, schema.OutcomeTimeout, "0 of 1 peers tried, 1 more cut off mid-exchange"},
		{"its only peer is penalised", []string{penalised.Addr()}, []string{penalised.Addr()}, schema.OutcomePeersPenalised, "penalised"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ih := schema.Hash(sha1.Sum(fmt.Appendf(nil, "nobody announces %d", i)))
			quiet := krpc.NodeInfo{ID: krpc.ID(ih), Addr: silentNode(t)}
			o := testOptions()
			o.Bootstrap = []string{startSlowNode(t, 0, nil, krpc.CompactIPv4NodeInfo{quiet})}
			// Timeout is the deadline under test; no peer may fail by
			// its own limits, nor the quiet node's query end, before it.
			o.Timeout = stallTimeout
			o.DHTQueryTimeout, o.PeerTimeout = backstop, backstop
			f := newFetcher(t, o)
			job := schema.Job{InfoHash: ih, HashType: schema.HashV1, Attempt: 1, LeaseID: "deadline",
				Peers: tt.peers, AvoidPeers: tt.avoid}
			r, ok := f.Fetch(context.Background(), job)
			if !ok {
				t.Fatal("no result")
			}
			checkResult(t, job, r)
			if r.Outcome != tt.want || !strings.Contains(r.Detail, tt.wantDetail) || len(r.PeerFailures) != 0 {
				t.Fatalf("outcome %s (%s), peer failures %+v; want %s (%q), none", r.Outcome, r.Detail, r.PeerFailures, tt.want, tt.wantDetail)
			}
			if st := f.Stats(); st.LookupsFailed != 0 {
				t.Fatalf("%d lookups failed; want the lookup answered and cut off by the deadline", st.LookupsFailed)
			}
		})
	}
}

// TestNoPeerSource: an attempt that had nowhere to look for a peer (no
// DHT node, no --peer, no peer in the job: fetch --no-dht alone) is
// local_error, saying why, which merge counts against no hash; it was
// no_peers, which merge counts as an attempt and backs off. Any one peer
// source, even one that finds nobody, keeps the swarm's classes.
func TestNoPeerSource(t *testing.T) {
	for i, tt := range []struct {
		name       string
		set        func(o *Options, job *schema.Job)
		want       string
		wantDetail string
	}{
		{"--no-dht", func(*Options, *schema.Job) {}, schema.OutcomeLocalError,
			"no peer source: --no-dht, no --peer, and the job has no peers"},
		{`--bootstrap "" without --dht-state`, func(o *Options, _ *schema.Job) { o.DHT = true }, schema.OutcomeLocalError,
			`no peer source: --bootstrap "" without --dht-state, no --peer, and the job has no peers`},
		{"a --peer that refuses", func(o *Options, _ *schema.Job) { o.Peers = []string{refusedAddr(t)} },
			schema.OutcomeConnectFailed, "refused"},
		{"a job's peer that refuses", func(_ *Options, job *schema.Job) { job.Peers = []string{refusedAddr(t)} },
			schema.OutcomeConnectFailed, "refused"},
		{"a DHT that knows no peer", func(o *Options, _ *schema.Job) { o.Bootstrap = []string{startSlowNode(t, 0, nil, nil)} },
			schema.OutcomeNoPeers, "no peers found; 1 DHT nodes answered"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := testOptions()
			job := schema.Job{InfoHash: schema.Hash(sha1.Sum(fmt.Appendf(nil, "no peer source %d", i))),
				HashType: schema.HashV1, Attempt: 1, LeaseID: "L"}
			tt.set(&o, &job)
			f := newFetcher(t, o)
			r, ok := f.Fetch(context.Background(), job)
			if !ok {
				t.Fatal("no result")
			}
			checkResult(t, job, r)
			if r.Outcome != tt.want || !strings.Contains(r.Detail, tt.wantDetail) {
				t.Fatalf("outcome %s (%s); want %s (%q)", r.Outcome, r.Detail, tt.want, tt.wantDetail)
			}
			if st := f.Stats(); st.Attempted != 1 || st.Outcomes[tt.want] != 1 {
				t.Fatalf("stats: attempted %d, outcomes %v; want 1 %s", st.Attempted, st.Outcomes, tt.want)
			}
		})
	}
}
