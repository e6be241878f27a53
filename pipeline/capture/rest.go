package capture

import (
	"container/heap"
	"encoding/hex"
	"net/netip"
	"time"

	"github.com/infohash/infohash/internal/dhtstate"
)

// A BEP 51 node's interval outlives the run that heard it: libtorrent
// asks for 6 h, and a cron capture runs every 15 minutes from the saved
// samplers and tables, so without this each run sampled those nodes
// again at its start (recording the same samples as new sightings). The
// state file keeps, for up to maxResting of them, when their interval
// ends; the next run queues them for then rather than at once.

// maxResting bounds the resting nodes kept in the state file (about
// 100 bytes each).
const maxResting = 20_000

// restingEntry is a BEP 51 node not to be sampled before Until.
type restingEntry struct {
	ID    string `json:"id"`    // 40 hex digits
	Addr  string `json:"addr"`  // ip:port
	Until int64  `json:"until"` // Unix seconds
}

// resting returns up to k BEP 51 nodes whose interval has not ended at
// now, for the state file.
func (c *crawler) resting(now time.Time, k int) []restingEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []restingEntry
	for addr, rm := range c.remotes {
		if len(out) == k {
			break
		}
		if rm.state == stateBEP51 && rm.next.After(now) {
			// Rounded up: never a second before the node asked.
			until := rm.next.Unix()
			if rm.next.Nanosecond() != 0 {
				until++
			}
			out = append(out, restingEntry{ID: hex.EncodeToString(rm.id[:]), Addr: addr.String(), Until: until})
		}
	}
	return out
}

// rest takes in saved resting nodes: one whose interval runs past now is
// known to answer BEP 51 and is sampled when it ends (an interval never
// longer than BEP 51's maximum from now, whatever the file says), and
// so is not queued again when a table or reply lists it.
func (c *crawler) rest(es []restingEntry, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range es {
		ap, err := netip.ParseAddrPort(e.Addr)
		id, ok := dhtstate.ParseID(e.ID)
		wait := time.Unix(e.Until, 0).Sub(now)
		if err != nil || !ok || wait <= 0 {
			continue
		}
		ap = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
		rm := c.admit(ap, id[:])
		if rm == nil {
			continue
		}
		rm.state = stateBEP51
		rm.next = now.Add(min(wait, maxRevisit))
		heap.Push(&c.due, dueItem{at: rm.next, addr: ap})
	}
}
