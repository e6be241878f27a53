package plan

import (
	"iter"

	"github.com/infohash/infohash/formats/schema"
)

// jobList is a pass's jobs held as the candidates picked for them (72
// bytes each, in the pools' own arrays), not as schema.Job (144 bytes
// each, plus its lists): at --limit 1M the two together made most of
// plan-retries' peak. A job is made from its candidate as the output
// takes it (all, rowio's WriteSeq), and the jobs' leases are made from
// the candidates too (planned).
type jobList struct {
	lists [3][]cand // picked, by pool, each sorted best first
	n     int
	id    string // the lease ID of every job
	until int64  // the lease_until of every job
	live  map[string]schema.PeerPenalty
}

// newJobList returns the jobs of the candidates picked, whose leases are
// id until until, under the peer penalties live.
func newJobList(picked [3][]cand, id string, until int64, live map[string]schema.PeerPenalty) *jobList {
	l := &jobList{lists: picked, id: id, until: until, live: live}
	for i := range picked {
		l.n += len(picked[i])
	}
	return l
}

// Len is how many jobs l holds (0 for nil).
func (l *jobList) Len() int {
	if l == nil {
		return 0
	}
	return l.n
}

// at returns the candidate at index g of the lists laid end to end.
func (l *jobList) at(g int32) *cand {
	i := int(g)
	for k := range l.lists {
		if i < len(l.lists[k]) {
			return &l.lists[k][i]
		}
		i -= len(l.lists[k])
	}
	panic("plan: job index out of range")
}

// job makes c's job, and says how many entries of c's avoid list it
// dropped (their penalty is over) and how many of c's peers it left out
// (penalised).
func (l *jobList) job(c *cand) (j schema.Job, dropped, withheld int) {
	avoid, dropped := liveAvoid(c.avoid(), l.live)
	peers, withheld := jobPeers(c.peers(), avoid, l.live)
	return schema.Job{InfoHash: c.hash, InfoHashV2: c.hashV2(), HashType: c.hashType, Attempt: c.attempt,
		Reason: reasonNames[c.reason], LeaseID: l.id, LeaseUntil: l.until, Peers: peers, AvoidPeers: avoid}, dropped, withheld
}

// count adds l's jobs to st's counters of what was planned.
func (l *jobList) count(st *Stats) {
	for k := range l.lists {
		for i := range l.lists[k] {
			c := &l.lists[k][i]
			j, dropped, withheld := l.job(c)
			st.AvoidExpired += dropped
			st.JobPeers += len(j.Peers)
			st.JobPeersAvoided += withheld
			switch c.reason {
			case reasonNew:
				st.PlannedNew++
				if c.overdue {
					st.PlannedNewOverdue++
				}
			case reasonReactivated:
				st.PlannedReactivated++
			case reasonCold:
				st.PlannedCold++
			default:
				st.PlannedRetry++
			}
			if c.relet {
				st.Relet++
			}
		}
	}
	st.Planned = l.n
}

// all yields l's jobs, best first, each made as it is taken.
func (l *jobList) all() iter.Seq[schema.Job] {
	return func(yield func(schema.Job) bool) {
		for g := range bestFirst(l.lists) {
			if j, _, _ := l.job(l.at(g)); !yield(j) {
				return
			}
		}
	}
}
