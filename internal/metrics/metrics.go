// Package metrics renders a stage's counters as a Prometheus text file,
// the format node_exporter's textfile collector reads.
package metrics

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

var unsafeName = regexp.MustCompile(`[^a-zA-Z0-9_]`)

func name(s string) string { return strings.ToLower(unsafeName.ReplaceAllString(s, "_")) }

// Render turns stats (any JSON-marshalable struct of counters) into
// Prometheus text: every number becomes a gauge infohash_<command>_<field>,
// a map of numbers one gauge with a key label, a bool 0 or 1. It adds the
// run's duration and completion time.
func Render(command string, stats any, duration time.Duration, at time.Time) ([]byte, error) {
	b, err := json.Marshal(stats)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("metrics: %T is not an object of counters", stats)
	}
	prefix := "infohash_" + name(command) + "_"
	var out strings.Builder
	gauge := func(metric, help string) {
		fmt.Fprintf(&out, "# HELP %s %s\n# TYPE %s gauge\n", metric, help, metric)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		metric := prefix + name(k)
		switch v := m[k].(type) {
		case float64:
			gauge(metric, "infohash "+command+" counter "+k+" of the last run.")
			fmt.Fprintf(&out, "%s %s\n", metric, num(v))
		case bool:
			gauge(metric, "infohash "+command+" flag "+k+" of the last run.")
			fmt.Fprintf(&out, "%s %d\n", metric, map[bool]int{false: 0, true: 1}[v])
		case map[string]any:
			sub := make([]string, 0, len(v))
			for sk := range v {
				if _, ok := v[sk].(float64); ok {
					sub = append(sub, sk)
				}
			}
			if len(sub) == 0 {
				continue
			}
			sort.Strings(sub)
			gauge(metric, "infohash "+command+" counters "+k+" of the last run, by key.")
			for _, sk := range sub {
				fmt.Fprintf(&out, "%s{key=%q} %s\n", metric, sk, num(v[sk].(float64)))
			}
		}
	}
	gauge(prefix+"run_duration_seconds", "Wall time of the last successful run.")
	fmt.Fprintf(&out, "%srun_duration_seconds %s\n", prefix, num(duration.Seconds()))
	gauge(prefix+"last_success_timestamp_seconds", "When the last successful run ended (Unix time).")
	fmt.Fprintf(&out, "%slast_success_timestamp_seconds %d\n", prefix, at.Unix())
	return []byte(out.String()), nil
}

func num(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
