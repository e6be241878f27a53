package status

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/infohash/infohash/pipeline/schedule"
)

// OtherFailure is the class an overdue retry counts under when its
// last_failure is none of the policy's (schedule.FailureClasses): empty,
// or a name this version does not give. It keeps the metric's
// last_failure label to a fixed set.
const OtherFailure = "other"

// OverdueByFailure counts the overdue retries (kind retry, wave overdue
// of WavesBy) by tier, then last failure class: what an operator who sees
// infohash_status_overdue{kind="retry"} climb wants to know next (no
// peers, or timeouts?). A tier's classes sum to its overdue retries.
type OverdueByFailure map[string]map[string]int64

// FailureLabels are the classes of OverdueByFailure, in the order the
// metrics file writes them: the policy's, then OtherFailure.
func FailureLabels() []string { return append(schedule.FailureClasses(), OtherFailure) }

// overdueCounter counts overdue retries by tier and class for
// OverdueByFailure, by index: a map of maps took three lookups a row, a
// third of status's CPU time on a dataset of 5M overdue retries.
type overdueCounter struct {
	index map[string]int // FailureLabels' index of a class
	last  string         // the class of the last row counted, and its index
	idx   int
	n     [2][]int64 // by WaveTiers' index, then FailureLabels'
}

func newOverdueCounter() *overdueCounter {
	c := &overdueCounter{index: map[string]int{}, idx: -1}
	for i, l := range FailureLabels() {
		c.index[l] = i
	}
	for t := range c.n {
		c.n[t] = make([]int64, len(c.index))
	}
	return c
}

// add counts an overdue retry of tier (a WaveTiers one) whose last
// failure is class.
func (c *overdueCounter) add(tier, class string) {
	if class != c.last || c.idx < 0 {
		i, ok := c.index[class]
		if !ok {
			i = c.index[OtherFailure]
		}
		c.last, c.idx = class, i
	}
	t := 0
	if tier != WaveTiers[0] {
		t = 1
	}
	c.n[t][c.idx]++
}

// counts returns what c counted.
func (c *overdueCounter) counts() OverdueByFailure {
	o := OverdueByFailure{}
	labels := FailureLabels()
	for t, tier := range WaveTiers {
		o[tier] = map[string]int64{}
		for i, l := range labels {
			o[tier][l] = c.n[t][i]
		}
	}
	return o
}

// printOverdueByFailure writes one line naming the commonest classes of
// each tier's overdue retries, when there are any.
func (r *Report) printOverdueByFailure(w io.Writer) {
	const top = 3
	var tiers []string
	for _, t := range WaveTiers {
		byClass := r.OverdueByFailure[t]
		classes := slices.DeleteFunc(slices.Collect(maps.Keys(byClass)), func(c string) bool { return byClass[c] == 0 })
		if len(classes) == 0 {
			continue
		}
		slices.SortFunc(classes, func(a, b string) int { return cmp.Or(cmp.Compare(byClass[b], byClass[a]), cmp.Compare(a, b)) })
		parts := make([]string, 0, top+1)
		var rest int64
		for i, c := range classes {
			if i < top {
				parts = append(parts, fmt.Sprintf("%s %d", c, byClass[c]))
			} else {
				rest += byClass[c]
			}
		}
		if rest > 0 {
			parts = append(parts, fmt.Sprintf("%d more", rest))
		}
		tiers = append(tiers, t+": "+strings.Join(parts, ", "))
	}
	if len(tiers) > 0 {
		fmt.Fprintf(w, "  overdue retries by last failure: %s\n", strings.Join(tiers, "; "))
	}
}

// overdueMetrics writes the overdue retries by tier and last failure.
func (r *Report) overdueMetrics(m func(name, help string) *family) {
	f := m("overdue_retries", `Overdue retries (infohash_status_overdue{kind="retry"}) by tier and last failure class `+
		`(other: none of the policy's classes); a tier's classes sum to its overdue retries.`)
	for _, t := range WaveTiers {
		for _, c := range FailureLabels() {
			f.set(float64(r.OverdueByFailure[t][c]), "tier", t, "last_failure", c)
		}
	}
}
