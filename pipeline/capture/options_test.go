package capture

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/internal/exitcode"
)

// TestCheckOptionsNamesTheOption: each unusable option is bad input whose
// message names its flag and the value given. One message used to cover
// three ("--max-rps, --max-observations and --duration must not be
// negative"), naming neither which nor the value.
func TestCheckOptionsNamesTheOption(t *testing.T) {
	for _, tt := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"max-rps negative", func(o *Options) { o.MaxRPS = -2 }, "capture: --max-rps: -2 is not 0 or more"},
		{"max-rps NaN", func(o *Options) { o.MaxRPS = math.NaN() }, "capture: --max-rps: NaN is not 0 or more"},
		{"max-observations", func(o *Options) { o.MaxObservations = -5 }, "capture: --max-observations: -5 is negative"},
		{"duration", func(o *Options) { o.Duration = -time.Minute }, "capture: --duration: -1m0s is negative"},
		{"node-ids", func(o *Options) { o.NodeIDs = 300 }, "capture: --node-ids: 300 is more than 256"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := testOptions()
			tt.edit(&o)
			_, err := checkOptions(o)
			if err == nil || err.Error() != tt.want || exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("error %v (exit %d), want %q (exit 2)", err, exitcode.Of(err), tt.want)
			}
			if strings.Count(err.Error(), "--") != 1 {
				t.Fatalf("%q names more than one flag", err)
			}
		})
	}
}
