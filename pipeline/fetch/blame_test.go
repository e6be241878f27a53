package fetch

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/tools/badpeers"
)

// TestJobDeadlineBlamesNoPeer: only a peer's own limits (PeerTimeout,
// ConnectTimeout) put it in peer_failures. A peer still mid-exchange when
// the job's Timeout ends the attempt is cut off by our deadline, not
// failed by its own: the attempt is timeout (it counts like a peer left
// untried), and the peer is not listed, so merge does not penalise it.
// The stall is the only timeout meant to fire in each row: whichever of
// Timeout and PeerTimeout is the stall timeout ends it, the other is a
// backstop, so the outcome does not depend on the machine's speed. Where
// cutWhen is set, the job's deadline passes once the fetcher's counters
// say the stall was reached (Options.cutJob; Timeout is a backstop), not
// after a time that a loaded machine could spend before it dialled the
// stalling peer. Every row checks that each peer that accepts
// connections was connected to: a row whose deadline came before its
// stall was reached would pass covering only a cut-off dial. A row with
// oneAtATime dials its peers in turn (PeersPerHash 1), so that the
// stalling peer, its last, is connected to only once the attempt has
// taken the earlier peers' failures: the deadline then passes after
// those failures, with no counter of their own to wait for. A peer cut
// off is not tried either (peers_tried counts the peers that answered,
// a refused dial included): peers_tried < peers_found tells the
// scheduler the attempt left peers to try; a cut-off peer used to count
// as tried, and a repeated peer-level failure then backed the hash off
// as if every peer found had failed.
func TestJobDeadlineBlamesNoPeer(t *testing.T) {
	tor := badpeers.NewTorrent(12, 1, 10)
	peers := map[badpeers.Behaviour]*badpeers.Peer{}
	for _, b := range []badpeers.Behaviour{badpeers.Stall, badpeers.Refuse, badpeers.Close} {
		peers[b] = startPeer(t, b, tor)
	}
	tests := []struct {
		name                 string
		timeout, peerTimeout time.Duration
		cutWhen              func(Stats) bool // when the job's deadline passes; nil: at timeout
		oneAtATime           bool             // PeersPerHash 1, else len(mix)
		mix                  []badpeers.Behaviour
		want                 string
		blamed               []badpeers.Behaviour // listed in peer_failures, each with its Expect class
		tried                int32                // peers_tried (peers_found is len(mix))
	}{
		{"job deadline cuts the stall off", backstop, backstop, func(s Stats) bool { return s.ConnectsOK == 1 }, false,
			[]badpeers.Behaviour{badpeers.Stall}, schema.OutcomeTimeout, nil, 0},
		{"peer deadline ends the stall", backstop, stallTimeout, nil, false,
			[]badpeers.Behaviour{badpeers.Stall}, schema.OutcomeTimeout, []badpeers.Behaviour{badpeers.Stall}, 1},
		// Before the fix a cut-off peer counted as a failed one and the
		// job's timeout as nothing: connect_failed would have stood.
		{"job deadline outranks a refused dial", backstop, backstop, func(s Stats) bool { return s.ConnectsOK == 1 && s.ConnectsFailed == 1 }, false,
			[]badpeers.Behaviour{badpeers.Refuse, badpeers.Stall}, schema.OutcomeTimeout, []badpeers.Behaviour{badpeers.Refuse}, 1},
		// No counter says when the closing peer's exchange has ended,
		// so the peers are dialled in turn: the stall's connection (the
		// third: the closing peer is dialled again over MSE, as
		// --encryption's default does for a peer that hangs up at
		// once) comes after the attempt took the closing peer's
		// failure, and the deadline passes while the stall runs.
		{"a peer-level failure outranks the job deadline", backstop, backstop, func(s Stats) bool { return s.ConnectsOK == 3 }, true,
			[]badpeers.Behaviour{badpeers.Close, badpeers.Stall}, schema.OutcomePeerLacksTorrent, []badpeers.Behaviour{badpeers.Close}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := testOptions()
			o.Timeout, o.PeerTimeout, o.PeersPerHash = tt.timeout, tt.peerTimeout, len(tt.mix)
			if tt.oneAtATime {
				o.PeersPerHash = 1
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var f *Fetcher
			if tt.cutWhen != nil {
				o.cutJob = func(_ schema.Job, cut func()) {
					go func() {
						for !tt.cutWhen(f.Stats()) {
							if ctx.Err() != nil {
								return
							}
							time.Sleep(time.Millisecond)
						}
						cut()
					}()
				}
			}
			f = newFetcher(t, o)
			job := schema.Job{InfoHash: tor.InfoHash, HashType: schema.HashV1, Attempt: 1, LeaseID: "blame"}
			connectable := 0
			for _, b := range tt.mix {
				job.Peers = append(job.Peers, peers[b].Addr())
				if b != badpeers.Refuse {
					connectable++
				}
			}
			r, ok := f.Fetch(ctx, job)
			if !ok {
				t.Fatal("attempt abandoned")
			}
			checkResult(t, job, r)
			// A peer that hangs up at once is dialled again over MSE.
			if st := f.Stats(); st.ConnectsOK != int64(connectable)+st.EncryptionRetries {
				t.Fatalf("%d of the %d peers that accept connections were connected to (%+v): the job's deadline came before its stall was reached",
					st.ConnectsOK, connectable, st)
			}
			if r.Outcome != tt.want || int(r.PeersFound) != len(tt.mix) || r.PeersTried != tt.tried {
				t.Fatalf("outcome %s (%s), %d of %d peers tried; want %s, %d of %d tried",
					r.Outcome, r.Detail, r.PeersTried, r.PeersFound, tt.want, tt.tried, len(tt.mix))
			}
			var got, want []string
			for _, pf := range r.PeerFailures {
				got = append(got, pf.Addr+" "+pf.Class)
			}
			for _, b := range tt.blamed {
				want = append(want, peers[b].Addr()+" "+b.Expect())
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("peer_failures %v, want %v", got, want)
			}
		})
	}
}
