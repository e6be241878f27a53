// Package metrics renders a stage's counters as a Prometheus text file,
// the format node_exporter's textfile collector reads.
package metrics

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

var unsafeName = regexp.MustCompile(`[^a-zA-Z0-9_]`)

func name(s string) string { return strings.ToLower(unsafeName.ReplaceAllString(s, "_")) }

// A Label names what a map counter of a stats struct is keyed by.
type Label struct {
	Name  string   // the label its keys go under: "outcome", "class", "method"
	Known []string // the keys written in every file, at 0 when nothing was counted
}

// A Labeler is a stats struct with map counters: MetricLabels returns the
// Label of each, by the map's JSON name. Render refuses a map it does not
// name, so that no counter goes out under a label that says nothing.
type Labeler interface {
	MetricLabels() map[string]Label
}

// Run describes the run the counters are of.
type Run struct {
	Duration time.Duration // its wall time
	At       time.Time     // when it ended
	// Exit is the status it ends with (package exitcode). Only 0 sets
	// last_success_timestamp_seconds to At; any other keeps LastSuccess.
	Exit int
	// LastSuccess is the last_success_timestamp_seconds of the file
	// being replaced (see LastSuccess); 0 for none, which a run that did
	// not succeed leaves out.
	LastSuccess float64
}

// Render turns stats (any JSON-marshalable struct of counters) into
// Prometheus text: every number becomes a gauge infohash_<command>_<field>,
// a bool 0 or 1, a map of numbers one gauge with the label its Labeler
// names (its known keys at 0 when absent), and a nested struct the gauges
// infohash_<command>_<field>_<its field>. It adds the run's duration, exit
// status and the time of the last successful run. A nil stats (a run that
// ended before it counted anything: locked out, bad input) gives only
// those.
func Render(command string, stats any, run Run) ([]byte, error) {
	prefix := "infohash_" + name(command) + "_"
	var out strings.Builder
	if stats != nil {
		if err := renderCounters(&out, prefix, command, stats); err != nil {
			return nil, err
		}
	}
	gauge(&out, prefix+"run_duration_seconds", "Wall time of the last run, whatever its exit_status.")
	fmt.Fprintf(&out, "%srun_duration_seconds %s\n", prefix, num(run.Duration.Seconds()))
	gauge(&out, prefix+"exit_status", "Exit status of the last run: 0 ok, 1 error, 2 bad input, 3 partial, 75 locked, 130 interrupted, 141 reader gone.")
	fmt.Fprintf(&out, "%sexit_status %d\n", prefix, run.Exit)
	last := run.LastSuccess
	if run.Exit == 0 {
		last = float64(run.At.Unix())
	}
	if last != 0 {
		gauge(&out, prefix+"last_success_timestamp_seconds", "When the last run that exited 0 ended (Unix time); a run that did not leaves it as it was.")
		fmt.Fprintf(&out, "%slast_success_timestamp_seconds %s\n", prefix, num(last))
	}
	return []byte(out.String()), nil
}

// renderCounters writes the gauges of stats (see Render) to out.
func renderCounters(out *strings.Builder, prefix, command string, stats any) error {
	var labels map[string]Label
	if l, ok := stats.(Labeler); ok {
		labels = l.MetricLabels()
	}
	for _, f := range mapFields(reflect.TypeOf(stats)) {
		if labels[f].Name == "" {
			return fmt.Errorf("metrics: %T: map %s has no label (MetricLabels)", stats, f)
		}
	}
	b, err := json.Marshal(stats)
	if err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("metrics: %T is not an object of counters", stats)
	}
	writeFields(out, prefix, command, "", m, labels)
	return nil
}

// LastSuccess returns the infohash_<command>_last_success_timestamp_seconds
// sample of old, a file Render wrote (its labels, AddLabels', whatever
// they are), or 0 when it has none.
func LastSuccess(old []byte, command string) float64 {
	want := "infohash_" + name(command) + "_last_success_timestamp_seconds"
	sc := bufio.NewScanner(bytes.NewReader(old))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), want)
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '{') {
			continue
		}
		v := strings.TrimSpace(rest)
		if rest[0] == '{' { // the value follows the labels' closing brace
			i := strings.LastIndexByte(v, '}')
			if i < 0 {
				continue
			}
			v = strings.TrimSpace(v[i+1:])
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0 && !math.IsInf(f, 0) {
			return f
		}
	}
	return 0
}

// writeFields writes the gauges of m, an object of counters; path is the
// field names above it ("union_"), for a nested struct.
func writeFields(out *strings.Builder, prefix, command, path string, m map[string]any, labels map[string]Label) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		metric := prefix + path + name(k)
		switch v := m[k].(type) {
		case float64:
			gauge(out, metric, "infohash "+command+" counter "+path+k+" of the last run.")
			fmt.Fprintf(out, "%s %s\n", metric, num(v))
		case bool:
			gauge(out, metric, "infohash "+command+" flag "+path+k+" of the last run.")
			fmt.Fprintf(out, "%s %d\n", metric, map[bool]int{false: 0, true: 1}[v])
		case map[string]any, nil: // nil: a map the run left nil
			l, ok := labels[k]
			if !ok || path != "" {
				if v, ok := v.(map[string]any); ok {
					writeFields(out, prefix, command, path+name(k)+"_", v, nil)
				}
				continue
			}
			counts := map[string]float64{}
			for _, key := range l.Known {
				counts[key] = 0
			}
			counted, _ := v.(map[string]any)
			for key, n := range counted {
				if f, ok := n.(float64); ok {
					counts[key] = f
				}
			}
			gauge(out, metric, "infohash "+command+" counters "+k+" of the last run, by "+l.Name+".")
			for _, key := range slices.Sorted(maps.Keys(counts)) {
				fmt.Fprintf(out, "%s{%s=%q} %s\n", metric, l.Name, key, num(counts[key]))
			}
		}
	}
}

// mapFields returns the JSON names of the map fields of struct type t
// (or of what t points to).
func mapFields(t reflect.Type) []string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || f.Type.Kind() != reflect.Map {
			continue
		}
		n, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch n {
		case "-":
			continue
		case "":
			n = f.Name
		}
		out = append(out, n)
	}
	return out
}

func gauge(out *strings.Builder, metric, help string) {
	fmt.Fprintf(out, "# HELP %s %s\n# TYPE %s gauge\n", metric, help, metric)
}

func num(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
