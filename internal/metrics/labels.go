package metrics

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// A ConstLabel is a label (--metrics-label NAME=VALUE) added to every
// series of a file, so that the files of two datasets can share one
// textfile folder: node_exporter refuses a series two files both hold.
type ConstLabel struct{ Name, Value string }

// Reserved lists the label names the commands' own series use (a map
// counter's Label.Name, status's labels, crawl-pass's step): a constant
// label of one of these names would clash with them.
var Reserved = []string{"class", "kind", "last_failure", "metadata_status", "method", "outcome", "step", "table", "tier", "wave"}

var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// ParseLabels parses --metrics-label values, each NAME=VALUE: NAME a
// Prometheus label name, not __* (Prometheus's own), nor one in
// Reserved, nor given twice; VALUE UTF-8 and not empty (an empty value
// is no label to Prometheus). VALUE may hold any character: it is
// escaped as written.
func ParseLabels(specs []string) ([]ConstLabel, error) {
	var out []ConstLabel
	for _, s := range specs {
		n, v, ok := strings.Cut(s, "=")
		switch {
		case !ok:
			return nil, fmt.Errorf("%q: want NAME=VALUE, such as dataset=main", s)
		case !labelName.MatchString(n):
			return nil, fmt.Errorf("%q: label name %q: want letters, digits and _, not starting with a digit", s, n)
		case strings.HasPrefix(n, "__"):
			return nil, fmt.Errorf("%q: label name %q: names starting with __ are Prometheus's own", s, n)
		case slices.Contains(Reserved, n):
			return nil, fmt.Errorf("%q: label name %q is one the series already use (%s): name another", s, n, strings.Join(Reserved, ", "))
		case v == "":
			return nil, fmt.Errorf("%q: empty value (Prometheus reads it as no label): give one", s)
		case !utf8.ValidString(v):
			return nil, fmt.Errorf("%q: value is not UTF-8", s)
		case slices.ContainsFunc(out, func(l ConstLabel) bool { return l.Name == n }):
			return nil, fmt.Errorf("%q: label %s given twice", s, n)
		}
		out = append(out, ConstLabel{Name: n, Value: v})
	}
	return out, nil
}

// AddLabels returns text, a Prometheus text file, with labels added to
// every sample, before the sample's own. It refuses a sample that
// already has one of them (Reserved is then short of a name).
func AddLabels(text []byte, labels []ConstLabel) ([]byte, error) {
	if len(labels) == 0 {
		return text, nil
	}
	var add strings.Builder
	for i, l := range labels {
		if i > 0 {
			add.WriteByte(',')
		}
		fmt.Fprintf(&add, `%s="%s"`, l.Name, escape(l.Value))
	}
	var out strings.Builder
	for line := range strings.Lines(string(text)) {
		if line == "" || line[0] == '#' || line == "\n" {
			out.WriteString(line)
			continue
		}
		i := strings.IndexAny(line, "{ ")
		if i < 0 {
			return nil, fmt.Errorf("metrics: %q: not a sample", strings.TrimSpace(line))
		}
		out.WriteString(line[:i])
		out.WriteByte('{')
		out.WriteString(add.String())
		if line[i] == '{' {
			for _, l := range labels {
				if strings.Contains(line[i:], "{"+l.Name+"=") || strings.Contains(line[i:], ","+l.Name+"=") {
					return nil, fmt.Errorf("metrics: %s: already has a label %s", line[:i], l.Name)
				}
			}
			if !strings.Contains(line[i:], "}") {
				return nil, fmt.Errorf("metrics: %q: labels not closed", strings.TrimSpace(line))
			}
			if line[i+1] != '}' {
				out.WriteByte(',')
			}
			out.WriteString(line[i+1:])
		} else {
			out.WriteByte('}')
			out.WriteString(line[i:])
		}
	}
	return []byte(out.String()), nil
}

// escape escapes a label value as the text format wants: backslash,
// double quote and newline.
func escape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}
