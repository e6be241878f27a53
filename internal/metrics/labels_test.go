package metrics

import (
	"strings"
	"testing"
	"time"
)

func TestParseLabels(t *testing.T) {
	for _, tt := range []struct {
		name  string
		specs []string
		want  []ConstLabel
		err   string
	}{
		{"none", nil, nil, ""},
		{"two", []string{"dataset=main", "host=a=b"}, []ConstLabel{{"dataset", "main"}, {"host", "a=b"}}, ""},
		{"quote and newline kept", []string{"x=a\"b\nc\\"}, []ConstLabel{{"x", "a\"b\nc\\"}}, ""},
		{"no =", []string{"dataset"}, nil, "want NAME=VALUE"},
		{"empty value", []string{"dataset="}, nil, "empty value"},
		{"empty name", []string{"=main"}, nil, "label name"},
		{"digit first", []string{"1x=a"}, nil, "not starting with a digit"},
		{"dash", []string{"data-set=a"}, nil, "want letters"},
		{"__", []string{"__name__=a"}, nil, "Prometheus's own"},
		{"used by status", []string{"tier=a"}, nil, "already use"},
		{"used by fetch", []string{"outcome=a"}, nil, "already use"},
		{"used by crawl-pass", []string{"step=a"}, nil, "already use"},
		{"twice", []string{"a=1", "a=2"}, nil, "given twice"},
		{"not UTF-8", []string{"a=\xff"}, nil, "not UTF-8"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseLabels(tt.specs)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v; want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil || len(got) != len(tt.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("got %v; want %v", got, tt.want)
				}
			}
		})
	}
}

// TestAddLabels: a stage's file with constant labels (golden), whose
// last success is still read back.
func TestAddLabels(t *testing.T) {
	at := time.Unix(1700000000, 0)
	full := stats{Read: 12, ByClass: map[string]int64{"ok": 9}, Union: &inner{Added: 4}}
	b, err := Render("dedup", full, Run{Duration: time.Second, At: at, Exit: 3, LastSuccess: 1600000000})
	if err != nil {
		t.Fatal(err)
	}
	labels := []ConstLabel{{"dataset", "main"}, {"note", "a\"b\\c\nd} e"}}
	got, err := AddLabels(b, labels)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "labelled.prom", string(got))
	if ls := LastSuccess(got, "dedup"); ls != 1600000000 {
		t.Errorf("LastSuccess of the labelled file = %v, want 1600000000", ls)
	}
	if _, err := AddLabels(got, labels[:1]); err == nil || !strings.Contains(err.Error(), "already has a label dataset") {
		t.Errorf("labelled twice: err %v; want one saying so", err)
	}
	if same, _ := AddLabels(b, nil); string(same) != string(b) {
		t.Error("no labels changed the file")
	}
}

// TestAddLabelsMalformed: a sample line whose labels are not closed is an
// error, not a panic (a last line ending in "{" indexed past its end).
func TestAddLabelsMalformed(t *testing.T) {
	for _, text := range []string{"x{", "x{\n", "x{a=\"1\" 2\n"} {
		if _, err := AddLabels([]byte(text), []ConstLabel{{"dataset", "main"}}); err == nil || !strings.Contains(err.Error(), "not closed") {
			t.Errorf("AddLabels(%q): err %v, want labels not closed", text, err)
		}
	}
}

// TestLabelledFilesDistinct: two datasets' files, labelled apart, hold no
// series in common (node_exporter refuses a series two files hold).
func TestLabelledFilesDistinct(t *testing.T) {
	b, err := Render("fetch", stats{ByClass: map[string]int64{"ok": 1}}, Run{At: time.Unix(1700000000, 0)})
	if err != nil {
		t.Fatal(err)
	}
	series := map[string]bool{}
	for _, v := range []string{"main", "test"} {
		got, err := AddLabels(b, []ConstLabel{{"dataset", v}})
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(got)) {
			if strings.HasPrefix(line, "#") {
				continue
			}
			s := line[:strings.LastIndexByte(line, ' ')]
			if series[s] {
				t.Errorf("series %s in both files", s)
			}
			series[s] = true
		}
	}
}

// FuzzLabels: whatever --metrics-label gets, ParseLabels refuses it or
// its labels go on every sample, once, and the last success still reads
// back.
func FuzzLabels(f *testing.F) {
	for _, s := range []string{"dataset=main", `a=b"c\d`, "x=1\n2", "__a=b", "tier=x", "a==", "=", "é=1"} {
		f.Add(s)
	}
	base, err := Render("merge", stats{ByClass: map[string]int64{"ok": 1}}, Run{At: time.Unix(1700000000, 0)})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		labels, err := ParseLabels([]string{spec})
		if err != nil {
			return
		}
		got, err := AddLabels(base, labels)
		if err != nil {
			t.Fatalf("%q: %v", spec, err)
		}
		if LastSuccess(got, "merge") != 1700000000 {
			t.Fatalf("%q: last success lost:\n%s", spec, got)
		}
		want := labels[0].Name + `="` + escape(labels[0].Value) + `"`
		for line := range strings.Lines(string(got)) {
			if strings.HasPrefix(line, "#") {
				continue
			}
			if !strings.Contains(line, "{"+want) || strings.Count(line, "\n") != 1 {
				t.Fatalf("%q: sample %q", spec, line)
			}
		}
	})
}
