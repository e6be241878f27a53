package loadgen

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/capture"
)

type countSink struct {
	mu        sync.Mutex
	hashes    map[[20]byte]int
	announces int
	rows      int
}

func (s *countSink) Write(rows []schema.Observation) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rows += len(rows)
	for _, r := range rows {
		s.hashes[r.InfoHash]++
		if r.Source == schema.SourceAnnouncePeer {
			s.announces++
		}
	}
	return nil
}

// TestEveryQueryIsRecorded sends a small load to a passive capture node
// and checks each query became exactly one observation.
func TestEveryQueryIsRecorded(t *testing.T) {
	o := capture.DefaultOptions()
	o.Listen, o.Bootstrap, o.Crawl, o.Progress = "127.0.0.1:0", nil, false, 0
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	ready := make(chan string, 1)
	o.Ready = func(a []string) { ready <- a[0] }
	ctx, cancel := context.WithCancel(context.Background())
	sink := &countSink{hashes: map[[20]byte]int{}}
	done := make(chan capture.Stats, 1)
	go func() {
		st, _ := capture.Run(ctx, o, sink)
		done <- st
	}()
	target := <-ready
	res, err := Run(context.Background(), Config{Target: target, Rate: 20000, Count: 2000, AnnounceEvery: 4, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	// Stop once capture has written every query: after a stop it drains
	// its socket only until 20 ms pass, so queries still queued on a slow
	// machine would be lost (a fixed 300 ms sleep here was the bet).
	sink.waitRows(int(res.Sent + res.Setup))
	cancel()
	st := <-done
	if res.Sent != 2000 || res.Announces != 500 || res.GetPeers != 1500 || res.Setup != 1 {
		t.Fatalf("result %+v", res)
	}
	for i := range res.Sent {
		if sink.hashes[Hash(3, i)] != 1 {
			t.Fatalf("query %d recorded %d times", i, sink.hashes[Hash(3, i)])
		}
	}
	if sink.announces != 500 || st.BadTokens != 0 || st.Observations != res.Sent+res.Setup {
		t.Fatalf("announces %d, stats %+v", sink.announces, st)
	}
}

// waitRows waits until the sink holds n rows, or until no row has come
// for a minute (the checks that follow then say what is missing): only a
// bound on a stuck run, which 10 s, on a loaded machine, was not.
func (s *countSink) waitRows(n int) {
	last, since := -1, time.Now()
	for {
		s.mu.Lock()
		rows := s.rows
		s.mu.Unlock()
		switch {
		case rows >= n:
			return
		case rows != last:
			last, since = rows, time.Now()
		case time.Since(since) > time.Minute:
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}
