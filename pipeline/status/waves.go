package status

import (
	"fmt"
	"io"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// Waves are the horizons of the retry histogram, nearest first. A hash
// counts in the first wave whose horizon D its next retry is within (D -1:
// no horizon). Name is the wave's key in --format json and its label in
// the metrics file: no spaces, so that jq (.retry_waves.within_1h) and
// alert rules take it as it is. Label is what the text report prints.
var Waves = []struct {
	Name, Label string
	D           time.Duration
}{
	{"overdue", "overdue", 0},
	{"within_1h", "next hour", time.Hour},
	{"within_1d", "next day", 24 * time.Hour},
	{"within_7d", "next week", 7 * 24 * time.Hour},
	{"within_30d", "next month", 30 * 24 * time.Hour},
	{"later", "later", -1},
}

// Kinds of the hashes in the retry waves.
const (
	// KindRetry is a hash whose fetches failed (metadata_status failed).
	KindRetry = "retry"
	// KindNew is a hash never tried (any other status but fetched), as
	// plan-retries counts it in due_new.
	KindNew = "new"
)

// WaveTiers and WaveKinds split the retry waves (Report.WavesBy, the
// tier and kind labels of the metrics), in the order they are printed.
// A hot retry is what plan-retries counts in due_retry once it is
// overdue, a hot new hash what it counts in due_new. Cold hashes are
// planned only in plan-retries' cold sweep, at the cold share's pace, so
// their waves do not drain at the pace of the hot ones.
var (
	WaveTiers = []string{schema.TierHot, schema.TierCold}
	WaveKinds = []string{KindRetry, KindNew}
)

// WavesBy counts hashes by tier, kind and wave name.
type WavesBy map[string]map[string]WaveCounts

// newWavesBy returns every tier, kind and wave at 0, for "jq
// .retry_waves_by_tier_and_kind.hot.retry.overdue" to read 0.
func newWavesBy() WavesBy {
	w := WavesBy{}
	for _, t := range WaveTiers {
		w[t] = map[string]WaveCounts{}
		for _, k := range WaveKinds {
			w[t][k] = WaveCounts{}
			for _, wv := range Waves {
				w[t][k][wv.Name] = 0
			}
		}
	}
	return w
}

// waveTierKind places a state row that is not fetched as plan-retries
// does (scanner.offer): cold when its file is a cold file or its tier
// column says cold, else hot; a retry when it failed before, else new.
func waveTierKind(s *stateView) (tier, kind string) {
	tier, kind = schema.TierHot, KindNew
	if s.ColdFile || s.Tier == schema.TierCold {
		tier = schema.TierCold
	}
	if s.MetadataStatus == schema.StatusFailed {
		kind = KindRetry
	}
	return tier, kind
}

// waiting reports whether a state row waits for a retry, as plan-retries
// would plan it once due: not fetched, not under a live lease, not
// blocklisted. A null next_retry (0) is due at once, as schedule.Due has
// it.
func waiting(s *stateView, leased bool, bl schedule.Blocklist) bool {
	return s.MetadataStatus != schema.StatusFetched && !leased && !bl.Contains(s.InfoHash)
}

// wave names the wave of a next retry due inMs from now.
func wave(inMs int64) string {
	for _, w := range Waves {
		if w.D < 0 || inMs <= w.D.Milliseconds() {
			return w.Name
		}
	}
	return Waves[len(Waves)-1].Name
}

// printWaves writes the retry waves for people: a line per wave, a
// column per tier and kind.
func (r *Report) printWaves(w io.Writer) {
	if r.WavesBy == nil {
		return // not counted: the blocklist is unreadable (printBlocklist)
	}
	fmt.Fprintf(w, "retry waves (from %s; hashes not fetched, leased nor blocklisted; cold ones wait for the cold sweep):\n",
		r.Now.Format(time.RFC3339))
	fmt.Fprintf(w, "  %-10s", "")
	for _, t := range WaveTiers {
		for _, k := range WaveKinds {
			fmt.Fprintf(w, " %11s", t+" "+k)
		}
	}
	fmt.Fprintln(w)
	for _, wv := range Waves {
		fmt.Fprintf(w, "  %-10s", wv.Label)
		for _, t := range WaveTiers {
			for _, k := range WaveKinds {
				fmt.Fprintf(w, " %11d", r.WavesBy[t][k][wv.Name])
			}
		}
		fmt.Fprintln(w)
	}
	r.printOverdueByFailure(w)
}
