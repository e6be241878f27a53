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

// all yields l's jobs in the jobs file's order (byShare), each made as
// it is taken.
func (l *jobList) all() iter.Seq[schema.Job] {
	return func(yield func(schema.Job) bool) {
		for g := range byShare(l.lists) {
			if j, _, _ := l.job(l.at(g)); !yield(j) {
				return
			}
		}
	}
}

// byShare yields the candidates of lists, each sorted best first, as
// their index in the lists laid end to end (jobList.at), interleaved by
// the lists' shares of them all: a smooth weighted round-robin weighted
// by the lists' lengths. Each step credits every list its length and
// takes the next candidate of the list with the most credit, which then
// pays the total. Of the first k candidates yielded, list i then holds
// k × len(lists[i]) / total within one, whatever k
// (TestByShareKeepsEveryPrefix), so a fetch that stops after any number
// of jobs (its --deadline releases the rest) has attempted each pool's
// quota share of them: written best first across the pools, the
// reactivated and starved retries came before every new hash. A list
// keeps its own order; a tie goes to the list whose next candidate is
// better (schedule.Priority), then to the first. The order depends on
// the lists alone, so the same pass writes the same file.
func byShare(lists [3][]cand) iter.Seq[int32] {
	return func(yield func(int32) bool) {
		var total int
		var start, next, credit [3]int
		for i := range lists {
			start[i] = total
			total += len(lists[i])
		}
		for range total {
			pick := -1
			for i := range lists {
				credit[i] += len(lists[i])
				if next[i] == len(lists[i]) { // its credit is no more than 0 now: never the most
					continue
				}
				if pick < 0 || credit[i] > credit[pick] ||
					credit[i] == credit[pick] && lists[i][next[i]].prio.Compare(lists[pick][next[pick]].prio) < 0 {
					pick = i
				}
			}
			credit[pick] -= total
			if !yield(int32(start[pick] + next[pick])) {
				return
			}
			next[pick]++
		}
	}
}
