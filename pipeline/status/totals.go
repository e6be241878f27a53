package status

import (
	"maps"
	"slices"
	"strings"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// totalMetrics writes the snapshot's totals as Prometheus counters,
// infohash_dataset_NAME_total: every family this build keeps, at 0 when no commit
// added to it yet, and for a labelled one the values an alert rule
// expects (outcome classes, plan kinds) at 0 too, so that rate() has a
// series from the first scrape.
func (r *Report) totalMetrics(b *strings.Builder) {
	byFamily := map[string]map[string]int64{}
	for k, v := range r.Totals {
		name, value := dataset.SplitTotalKey(k)
		if byFamily[name] == nil {
			byFamily[name] = map[string]int64{}
		}
		byFamily[name][value] = v
	}
	for _, tf := range dataset.TotalFamilies {
		f := &family{b: b, name: "infohash_dataset_" + tf.Name + "_total", help: tf.Help, counter: true}
		got := byFamily[tf.Name]
		if tf.Label == "" {
			f.set(float64(got[""]))
			continue
		}
		for _, v := range union(totalLabelValues(tf.Name), slices.Collect(maps.Keys(got))) {
			if v != "" {
				f.set(float64(got[v]), tf.Label, v)
			}
		}
	}
}

// totalLabelValues are the label values written at 0 for a labelled
// family before any commit counted them.
func totalLabelValues(name string) []string {
	switch name {
	case dataset.TotalPlanJobs:
		return []string{"new", "retry", "reactivated", "cold"}
	case dataset.TotalMergeAttempts:
		// peers_penalised is no failure class, but an outcome merge counts.
		return append([]string{"ok"}, slices.Sorted(slices.Values(append(schedule.FailureClasses(), schema.OutcomePeersPenalised)))...)
	}
	return nil
}

// sumFamily sums family name's totals over its label values.
func sumFamily(t map[string]int64, name string) int64 {
	var n int64
	for k, v := range t {
		if f, _ := dataset.SplitTotalKey(k); f == name {
			n += v
		}
	}
	return n
}
