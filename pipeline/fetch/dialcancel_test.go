//go:build linux

package fetch

import (
	"context"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/tools/badpeers"
)

// hangingAddr returns a 127.0.0.1 address whose TCP dials hang: a socket
// listening with a backlog of 0 whose accept queue is already full, so
// the kernel drops further SYNs instead of answering them.
func hangingAddr(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := (&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: sa.(*syscall.SockaddrInet4).Port}).String()
	for range 8 { // fill the accept queue until a dial hangs
		c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
		if err != nil {
			return addr
		}
		t.Cleanup(func() { c.Close() })
	}
	t.Skip("could not fill the accept queue of a backlog-0 listener")
	return ""
}

// TestCancelledDialIsNoConnectFailure: a dial still in progress when
// another peer serves the metadata is cancelled by us; it is no failed
// connect in the counters and no peer failure (connects_failed used to
// count it, inflating the connect stage's failures whenever a fast peer
// won over a slow one).
//
// Nothing is timed: a dial left to run would end by its ConnectTimeout,
// long after the good peer's milliseconds even on a loaded machine and
// long before the job's backstop, as a failed connect and a peer failure,
// which the outcome and the counters show.
func TestCancelledDialIsNoConnectFailure(t *testing.T) {
	hang := hangingAddr(t)
	o := testOptions()
	o.ConnectTimeout = 10 * stallTimeout
	o.Timeout, o.PeerTimeout = backstop, backstop
	f := newFetcher(t, o)
	tor := badpeers.NewTorrent(11, 1, 10)
	good := startPeer(t, badpeers.Good, tor)
	job := schema.Job{InfoHash: tor.InfoHash, Peers: []string{hang, good.Addr()}}
	r, ok := f.Fetch(context.Background(), job)
	if !ok || r.Outcome != schema.OutcomeOK || len(r.PeerFailures) != 0 {
		t.Fatalf("outcome %s (%s), peer failures %+v", r.Outcome, r.Detail, r.PeerFailures)
	}
	st := f.Stats()
	if st.Connects != 2 || st.ConnectsOK != 1 || st.ConnectsFailed != 0 || st.ConnectsCancelled != 1 {
		t.Fatalf("connects %d, ok %d, failed %d, cancelled %d; want 2, 1, 0, 1", st.Connects, st.ConnectsOK, st.ConnectsFailed, st.ConnectsCancelled)
	}
	checkConnectsAddUp(t, st)
}

// checkConnectsAddUp checks that every dial of a finished run is counted
// once: connected, failed, cancelled or a local error. A dial we
// cancelled was in none of the others, and the summary's connects did not
// add up.
func checkConnectsAddUp(t *testing.T, st Stats) {
	t.Helper()
	if sum := st.ConnectsOK + st.ConnectsFailed + st.ConnectsCancelled + st.ConnectsLocalError; sum != st.Connects {
		t.Errorf("connects %d, but ok %d + failed %d + cancelled %d + local errors %d = %d",
			st.Connects, st.ConnectsOK, st.ConnectsFailed, st.ConnectsCancelled, st.ConnectsLocalError, sum)
	}
}

// TestDialCutOffByJobDeadline: a dial still hanging when the job's
// Timeout passes is cut off by our deadline, not failed by the peer (its
// own ConnectTimeout and PeerTimeout are backstops here): the attempt is
// timeout, the peer is not in peer_failures nor tried (it gave no
// answer), and no connect failed. It used to be connect_failed, listed
// against the peer.
func TestDialCutOffByJobDeadline(t *testing.T) {
	hang := hangingAddr(t)
	o := testOptions()
	o.Timeout = stallTimeout
	f := newFetcher(t, o)
	job := schema.Job{InfoHash: schema.Hash{13}, Peers: []string{hang}}
	r, ok := f.Fetch(context.Background(), job)
	if !ok || r.Outcome != schema.OutcomeTimeout || len(r.PeerFailures) != 0 || r.PeersFound != 1 || r.PeersTried != 0 {
		t.Fatalf("outcome %s (%s), %d of %d tried, peer failures %+v; want timeout, 0 of 1 tried (cut off), none",
			r.Outcome, r.Detail, r.PeersTried, r.PeersFound, r.PeerFailures)
	}
	st := f.Stats()
	if st.Connects != 1 || st.ConnectsFailed != 0 || st.ConnectsCancelled != 1 {
		t.Fatalf("connects %d, failed %d, cancelled %d; want 1, 0, 1", st.Connects, st.ConnectsFailed, st.ConnectsCancelled)
	}
	checkConnectsAddUp(t, st)
}
