package schedule

import (
	"math"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// PenalizePeer applies a failure of class by the endpoint addr at at to
// its prior penalty (nil if none) and returns the new penalty, or false
// when the class does not penalise endpoints (see PeerPenaltyRule).
//
// The n-th failure in a row lasts Base[class]·Factor^(n-1), at most Max.
// A failure while the endpoint is still penalised (several jobs tried it
// before the penalty reached them) does not escalate, and a penalty never
// gets shorter; one that expired more than Forget before at is forgotten.
// Class names the failure that set the current until.
func PenalizePeer(p Policy, prev *schema.PeerPenalty, addr, class string, at int64) (schema.PeerPenalty, bool) {
	r := p.PeerPenalty
	base := r.Base[class]
	if base <= 0 {
		if prev != nil {
			return *prev, false
		}
		return schema.PeerPenalty{}, false
	}
	if prev != nil && prev.Addr != addr {
		prev = nil
	}
	out := schema.PeerPenalty{Addr: addr, Class: class, Failures: 1, LastAt: at}
	if prev != nil {
		switch {
		case at < prev.Until:
			out.Failures = max(prev.Failures, 1)
		case at-prev.Until <= millis(r.Forget):
			out.Failures = inc(prev.Failures)
		}
		out.LastAt = max(prev.LastAt, at)
	}
	d := float64(base) * math.Pow(r.Factor, float64(out.Failures-1))
	if !(d <= float64(r.Max)) {
		d = float64(r.Max)
	}
	out.Until = at + int64(time.Duration(d)/time.Millisecond)
	if prev != nil && prev.Until > out.Until {
		out.Until, out.Class = prev.Until, prev.Class
	}
	return out, true
}

// Avoided reports whether the endpoint is still penalised at now.
func Avoided(pp schema.PeerPenalty, now int64) bool { return pp.Until > now }
