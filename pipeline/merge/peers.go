package merge

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// peerTable is DIR/peers/: one penalty per endpoint.
type peerTable struct {
	rows    map[string]schema.PeerPenalty
	changed bool
}

func readPeers(d *dataset.Dataset, m *dataset.Manifest) (*peerTable, error) {
	t := m.Table(dataset.TablePeers)
	rows, err := dataset.ReadSourcePartition[schema.PeerPenalty](d, t, "") // rewritten when changed
	if err != nil {
		return nil, fmt.Errorf("merge: peers: %w", err)
	}
	pt := &peerTable{rows: make(map[string]schema.PeerPenalty, len(rows))}
	for _, r := range rows {
		pt.rows[r.Addr] = r
	}
	return pt, nil
}

// penalize applies every peer failure of results, oldest first, and
// reports how many placed a penalty on an endpoint or extended its
// penalty (a later until): merge's peer_penalties. Peer failures are
// facts about endpoints: they count even when their result is late. A
// failure seen again (the same result in another input, or sent again
// after a cut stream) finds the endpoint's penalty in place: it does not
// escalate it, and counts none.
func (pt *peerTable) penalize(p schedule.Policy, fs []schema.PeerFailure) int {
	slices.SortStableFunc(fs, func(a, b schema.PeerFailure) int {
		return cmp.Or(cmp.Compare(a.At, b.At), cmp.Compare(a.Addr, b.Addr))
	})
	n := 0
	for _, f := range fs {
		if f.Addr == "" {
			continue
		}
		prev, had := pt.rows[f.Addr]
		var pp *schema.PeerPenalty
		if had {
			pp = &prev
		}
		next, ok := schedule.PenalizePeer(p, pp, f.Addr, f.Class, f.At)
		if !ok {
			continue
		}
		if !had || next.Until > prev.Until {
			n++
		}
		if !had || next != prev {
			pt.rows[f.Addr] = next
			pt.changed = true
		}
	}
	return n
}

// prune forgets penalties that ended more than the policy's forget time
// before now.
func (pt *peerTable) prune(p schedule.Policy, now int64) int {
	forget := int64(p.PeerPenalty.Forget) / 1e6
	n := 0
	for a, r := range pt.rows {
		if r.Until+forget < now {
			delete(pt.rows, a)
			n++
		}
	}
	if n > 0 {
		pt.changed = true
	}
	return n
}

// stage writes the table (sorted by address) into tx if it changed.
func (pt *peerTable) stage(tx *dataset.Tx) error {
	if !pt.changed {
		return nil
	}
	if len(pt.rows) == 0 {
		tx.SetPartition(dataset.TablePeers, "", nil)
		return nil
	}
	rows := make([]schema.PeerPenalty, 0, len(pt.rows))
	for _, r := range pt.rows {
		rows = append(rows, r)
	}
	slices.SortFunc(rows, func(a, b schema.PeerPenalty) int { return cmp.Compare(a.Addr, b.Addr) })
	fi, err := dataset.WriteStaged(tx, dataset.TablePeers, "", rows)
	if err != nil {
		return fmt.Errorf("merge: peers: %w", err)
	}
	tx.SetPartition(dataset.TablePeers, "", []dataset.FileInfo{fi})
	return nil
}
