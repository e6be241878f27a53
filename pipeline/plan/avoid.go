package plan

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// livePenalties reads the endpoint penalties of snapshot m (DIR/peers/,
// written by merge) and keeps those still live at now.
func livePenalties(d *dataset.Dataset, m *dataset.Manifest, now int64) (map[string]schema.PeerPenalty, error) {
	rows, err := dataset.ReadPartition[schema.PeerPenalty](d, m.Table(dataset.TablePeers), "")
	if err != nil {
		return nil, fmt.Errorf("plan-retries: peers: %w", err)
	}
	live := make(map[string]schema.PeerPenalty, len(rows))
	for _, r := range rows {
		if schedule.Avoided(r, now) {
			live[r.Addr] = r
		}
	}
	return live, nil
}

// liveAvoid returns the endpoints of a hash's avoid_peers whose penalty is
// still live (an endpoint whose penalty ended, or that peers/ no longer
// knows, is tried again: the penalty was the endpoint's, not the swarm's),
// and how many it dropped.
func liveAvoid(avoid []string, live map[string]schema.PeerPenalty) ([]string, int) {
	out := make([]string, 0, len(avoid))
	for _, a := range avoid {
		if _, ok := live[a]; ok {
			out = append(out, a)
		}
	}
	return slices.Clip(out), len(avoid) - len(out)
}

// jobPeers returns the endpoints of a hash's peers (announced, newest
// first) to hand its job, in order: those neither in its live avoid list
// (avoid, from liveAvoid) nor penalised in peers/ (live), which fetch
// would skip anyway; and how many it left out.
func jobPeers(peers, avoid []string, live map[string]schema.PeerPenalty) ([]string, int) {
	out := make([]string, 0, len(peers))
	for _, p := range peers {
		if _, penalised := live[p]; !penalised && !slices.Contains(avoid, p) {
			out = append(out, p)
		}
	}
	return slices.Clip(out), len(peers) - len(out)
}

// avoidList renders the live penalties as the jobs file's avoid list
// (schema.AvoidPeersKey), the longest-lasting first when they are more
// than a file carries (schema.MaxAvoidPeers, schema.MaxAvoidBytes): fetch
// skips these endpoints for every job. It returns the text and how many
// endpoints it lists.
func avoidList(live map[string]schema.PeerPenalty) (string, int) {
	ps := make([]schema.AvoidedPeer, 0, len(live))
	for a, r := range live {
		ps = append(ps, schema.AvoidedPeer{Addr: a, Until: r.Until})
	}
	slices.SortFunc(ps, func(a, b schema.AvoidedPeer) int {
		return cmp.Or(cmp.Compare(b.Until, a.Until), cmp.Compare(a.Addr, b.Addr))
	})
	return schema.EncodeAvoidPeers(ps)
}
