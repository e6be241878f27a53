package capture

import (
	"errors"
	"syscall"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// fullSink takes the first room rows written to it and refuses the rest
// as rowio.Writer does on a full disk (a *rowio.FullError saying how
// many of the call's rows it took), or with err when it is set.
type fullSink struct {
	room int
	err  error
	rows []schema.Observation
}

func (s *fullSink) Write(rows []schema.Observation) error {
	if s.err != nil {
		return s.err
	}
	n := min(s.room-len(s.rows), len(rows))
	s.rows = append(s.rows, rows[:n]...)
	if n < len(rows) {
		return &rowio.FullError{Name: "obs.parquet", Err: syscall.ENOSPC, Taken: n}
	}
	return nil
}

// TestWriteCountsOnlyKeptHashes: distinct_hashes counts the hashes of the
// observations the output took, not those of a batch (or the part of one)
// a full disk refused, nor those of a batch a failed sink lost.
func TestWriteCountsOnlyKeptHashes(t *testing.T) {
	obs := func(hashes ...byte) []schema.Observation {
		out := make([]schema.Observation, len(hashes))
		for i, h := range hashes {
			out[i] = schema.Observation{InfoHash: schema.Hash{h}}
		}
		return out
	}
	batches := [][]schema.Observation{obs(1, 2, 1), obs(2, 3, 4, 5), obs(6, 7)}
	tests := []struct {
		name         string
		room         int
		err          error
		wantDistinct int64
	}{
		{"all fit", 100, nil, 7},
		{"full at a batch's end", 3, nil, 2},
		{"full within a batch", 5, nil, 3},
		{"full at the start", 0, nil, 0},
		{"sink failed", 100, errors.New("broken pipe"), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &runner{opts: DefaultOptions(), batches: make(chan []schema.Observation, len(batches))}
			for _, b := range batches {
				r.batches <- b
			}
			close(r.batches)
			sink := &fullSink{room: tt.room, err: tt.err}
			stopped := false
			err := r.write(sink, func(error) { stopped = true })
			if (tt.err != nil || tt.room < 9) != (err != nil) || stopped != (err != nil) {
				t.Errorf("write: %v (run stopped: %v)", err, stopped)
			}
			kept := map[schema.Hash]bool{}
			for _, o := range sink.rows {
				kept[o.InfoHash] = true
			}
			if got := r.c.stats().DistinctHashes; got != tt.wantDistinct || got != int64(len(kept)) {
				t.Errorf("distinct_hashes %d; want %d, the distinct hashes of the %d rows kept", got, tt.wantDistinct, len(sink.rows))
			}
		})
	}
}
