package capture

import (
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/krpc"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// slowSink passes each batch to next after a pause, like a sink on a
// slow disk: a node's flushes then wait for the writer.
type slowSink struct {
	next  Sink
	pause time.Duration
}

func (s slowSink) Write(rows []schema.Observation) error {
	time.Sleep(s.pause)
	return s.next.Write(rows)
}

// drainNode is a fuzzNode whose observations go one at a time through
// the run's writer into sink; wait closes the batches and returns the
// writer's error once the read loop is done.
func drainNode(t *testing.T, sink Sink, quiet, most time.Duration) (n *node, wait func() error) {
	t.Helper()
	n = fuzzNode(t)
	n.r.opts.BatchSize = 1
	n.r.opts.drainQuiet, n.r.opts.drainMax = quiet, most
	n.r.batches = make(chan []schema.Observation, 4)
	var werr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		werr = n.r.write(sink, func(error) {})
	}()
	return n, func() error { close(n.r.batches); <-done; return werr }
}

// TestDrainKeepsWhatIsQueuedAtStop queues queries in a node's socket and
// starts its read loop already stopped, with a writer slow enough that
// handling them takes far longer than the old 20 ms drain: every one must
// still be read, written to Parquet once, and counted once.
func TestDrainKeepsWhatIsQueuedAtStop(t *testing.T) {
	path := filepath.Join(t.TempDir(), "obs.parquet")
	w, err := rowio.Create[schema.Observation](path, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The cap is out of reach: only a quiet socket may end this drain (1 s
	// of quiet here, slack for a loaded machine; the old drain was 20 ms).
	n, wait := drainNode(t, slowSink{next: w, pause: time.Millisecond}, time.Second, time.Hour)
	const total = 100
	var ps [][]byte
	for i := range total {
		ps = append(ps, krpc.AppendGetPeers(nil, []byte(fmt.Sprint(i)), peerID, hashN(i)))
	}
	sendAll(t, n.sock.LocalAddr().String(), ps...)
	stop := make(chan struct{})
	close(stop)
	n.serve(stop)
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rows := readObservations(t, path)
	seen := map[[20]byte]int{}
	for _, o := range rows {
		seen[o.InfoHash]++
	}
	st := n.r.c.stats()
	if len(rows) != total || len(seen) != total || st.Observations != total || st.DistinctHashes != total {
		t.Fatalf("drain kept %d rows of %d distinct hashes (stats: %d written, %d distinct); want %d of each",
			len(rows), len(seen), st.Observations, st.DistinctHashes, total)
	}
}

// TestDrainEndsUnderFlood: a socket that never falls quiet still ends the
// drain, at drainMax, and what was read is written.
func TestDrainEndsUnderFlood(t *testing.T) {
	sink := &memSink{}
	// The quiet interval is out of reach: only the cap may end this drain.
	n, wait := drainNode(t, sink, time.Hour, 200*time.Millisecond)
	c := sendAll(t, n.sock.LocalAddr().String())
	var sent atomic.Int64
	flood := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-flood:
				return
			default:
			}
			if _, err := c.Write(krpc.AppendGetPeers(nil, []byte(fmt.Sprint(i)), peerID, hashN(i))); err == nil {
				sent.Add(1)
			}
			time.Sleep(time.Millisecond)
		}
	})
	defer func() { close(flood); wg.Wait() }()
	waitFor(t, "the flood to start", func() bool { return sent.Load() > 0 })
	stop := make(chan struct{})
	close(stop)
	served := make(chan struct{})
	go func() { n.serve(stop); close(served) }()
	select {
	case <-served:
	case <-time.After(30 * time.Second):
		t.Fatal("the drain went on under a flood")
	}
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	if st := n.r.c.stats(); st.Observations == 0 || st.Observations != int64(len(sink.rows)) {
		t.Fatalf("%d observations written, %d in the sink", st.Observations, len(sink.rows))
	}
}
