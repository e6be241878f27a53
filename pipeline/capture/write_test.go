package capture

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
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

// TestDistinctCounter: distinct_hashes is exact up to exactDistinct
// hashes, then an estimate within 2% (its sketch a fixed 64 KiB, where
// the exact set it replaced grew by about 80 bytes a hash, to 650 MB).
func TestDistinctCounter(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	d := newDistinctCounter()
	var h [20]byte
	n := 0
	for _, at := range []int{1, 1000, exactDistinct, exactDistinct + 1, 100_000, 300_000, 1 << 20, 3 << 20} {
		for ; n < at; n++ {
			binary.LittleEndian.PutUint64(h[:], rng.Uint64())
			d.add(h)
			if n%3 == 0 {
				d.add(h) // seen again: counts once
			}
		}
		got := d.count()
		if at <= exactDistinct && got != int64(at) {
			t.Errorf("%d hashes: counted %d, want exactly %d", at, got, at)
		}
		if off := math.Abs(float64(got-int64(at))) / float64(at); off > 0.02 {
			t.Errorf("%d hashes: estimated %d, %.2f%% off", at, got, 100*off)
		}
	}
	if d.exact != nil || d.sketch == nil {
		t.Fatalf("past %d hashes: exact set of %d, sketch %v; want none and a sketch", exactDistinct, len(d.exact), d.sketch != nil)
	}
}

type discardSink struct{}

func (discardSink) Write([]schema.Observation) error { return nil }

// TestDistinctCountIsBounded: counting the distinct hashes of a flood of
// 500,000 distinct ones allocates a bounded sketch, not a set of them all
// (which took about 80 bytes a hash, 650 MB at its old bound).
func TestDistinctCountIsBounded(t *testing.T) {
	const total, batch = 500_000, 4096
	r := &runner{opts: DefaultOptions(), batches: make(chan []schema.Observation, total/batch+1)}
	for i := 0; i < total; i += batch {
		b := make([]schema.Observation, min(batch, total-i))
		for j := range b {
			binary.LittleEndian.PutUint64(b[j].InfoHash[:], uint64(i+j)*0x9E3779B97F4A7C15)
		}
		r.batches <- b
	}
	close(r.batches)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := r.write(discardSink{}, func(error) {}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	got := r.c.stats().DistinctHashes
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("counting %d distinct hashes allocated %d MB, want at most 16", total, alloc>>20)
	}
	if off := math.Abs(float64(got-total)) / total; off > 0.02 {
		t.Errorf("distinct_hashes %d of %d: %.2f%% off", got, total, 100*off)
	}
}
