package capture

import (
	"fmt"
	"time"

	"github.com/infohash/infohash/internal/exitcode"
)

// silence says, as an error wrapping exitcode.ErrPartial, that a run
// which asked someone to let it into the DHT (a --bootstrap router, or a
// saved node: saved counts those the crawler had) heard nothing at all
// for its whole length d: no reply to any query, and no query from any
// node. That is a network outage or a dead --bootstrap, not a quiet
// pass, and a cron job must not count it as one (fetch ends partial
// likewise). It is nil when the run heard a DHT message, or had nobody
// to ask (--bootstrap "" and no saved node: it only waited to be found).
func (r *runner) silence(s Stats, saved int, d time.Duration) error {
	asked := r.asked.Load() > 0 || (r.crawler != nil && saved > 0)
	if !asked || s.Responses > 0 {
		return nil
	}
	for _, n := range s.Queries {
		if n > 0 {
			return nil
		}
	}
	return fmt.Errorf("capture: no DHT node answered the bootstrap (check the network and --bootstrap), nor sent a query, in %s: nothing captured: %w",
		d.Round(time.Millisecond), exitcode.ErrPartial)
}
