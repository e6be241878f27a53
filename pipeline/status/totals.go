package status

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/plural"
	"github.com/infohash/infohash/pipeline/schedule"
)

// printTotals writes the text's totals line: none before any commit
// counted work (or in an older format not migrated yet). Totals that
// began at a migration (TotalsSince) say so first: they are not the
// dataset's history, and "0 new hashes" beside the hashes it had read as
// a new dataset's.
func (r *Report) printTotals(w io.Writer) {
	t := r.Totals
	if len(t) == 0 && r.TotalsSince == nil {
		return
	}
	since := ""
	if r.TotalsSince != nil {
		since = "since the migration at " + r.TotalsSince.Format(time.RFC3339) + " (older work was not counted): "
	}
	fmt.Fprintf(w, "totals\t%s%s, %s, %s planned (%d for overdue new hashes), %s merged (%s stored, %s deferred by peer penalties)\n",
		since, plural.Count(t[dataset.TotalDedupObservations], "observation", "observations"), plural.Count(t[dataset.TotalDedupNew], "new hash", "new hashes"),
		plural.Count(sumFamily(t, dataset.TotalPlanJobs), "job", "jobs"), t[dataset.TotalPlanNewOverdue],
		plural.Count(sumFamily(t, dataset.TotalMergeAttempts), "attempt", "attempts"), plural.Count(t[dataset.TotalMergeTorrents], "torrent", "torrents"),
		plural.Count(t[dataset.TotalMergeDeferred], "retry", "retries"))
}

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
