package obsgen

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/infohash/infohash/formats/fsutil"
)

// Truth is what a generated file contains, for tests and benchmarks to
// compare a deduplicated state against.
type Truth struct {
	Seed uint64 `json:"seed"`
	// Rows is the number of observations, which is also the sum of the
	// per-hash counts.
	Rows int64 `json:"rows"`
	// Distinct is the number of different infohashes in the file.
	Distinct int64 `json:"distinct"`
	// New is how many of them no earlier file had (ranks ≥ Known).
	New int64 `json:"new"`
	// Known is how many ranks earlier files introduced; After = Known+New
	// is the number of hashes a state holds once it has applied them all.
	Known int64 `json:"known"`
	After int64 `json:"after"`
	// V2Distinct counts the distinct v2 hashes.
	V2Distinct int64 `json:"v2_distinct"`
	// MinObservedAt and MaxObservedAt are UTC milliseconds.
	MinObservedAt int64 `json:"min_observed_at_ms"`
	MaxObservedAt int64 `json:"max_observed_at_ms"`
	// TopHash is the most popular hash (rank 0), seen TopCount times here.
	TopHash  string `json:"top_hash"`
	TopCount int64  `json:"top_count"`
	// Sources counts observations per source column value.
	Sources map[string]int64 `json:"sources"`
}

func (t *Truth) observe(ms int64) {
	if t.MinObservedAt == 0 && t.MaxObservedAt == 0 {
		t.MinObservedAt, t.MaxObservedAt = math.MaxInt64, math.MinInt64
	}
	t.MinObservedAt = min(t.MinObservedAt, ms)
	t.MaxObservedAt = max(t.MaxObservedAt, ms)
}

// MinTime and MaxTime are the observed_at bounds as times.
func (t Truth) MinTime() time.Time { return time.UnixMilli(t.MinObservedAt).UTC() }

// MaxTime is the latest observed_at.
func (t Truth) MaxTime() time.Time { return time.UnixMilli(t.MaxObservedAt).UTC() }

// truthJSON adds readable times to the JSON form.
type truthJSON struct {
	Truth
	MinObserved string `json:"min_observed_at"`
	MaxObserved string `json:"max_observed_at"`
}

// WriteJSON writes t as indented JSON to path, as fsutil.WriteOutput
// does (a file atomically, through a symbolic link to its target; a
// device or FIFO in place, never replaced).
func (t Truth) WriteJSON(path string) error {
	b, err := json.MarshalIndent(truthJSON{t,
		t.MinTime().Format(time.RFC3339Nano), t.MaxTime().Format(time.RFC3339Nano)}, "", "  ")
	if err != nil {
		return err
	}
	if err := fsutil.WriteOutput(path, append(b, '\n')); err != nil {
		return fmt.Errorf("ground truth: %w", err)
	}
	return nil
}
