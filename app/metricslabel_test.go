package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMetricsLabel: --metrics-label puts its labels on every series of a
// stage's and status's --metrics-file, so that two datasets' files share
// one textfile folder (no series in both: node_exporter refuses those),
// and a run that does not exit 0 still reads back the labelled file's
// last success time. A bad label is a usage error: exit 2, no file.
func TestMetricsLabel(t *testing.T) {
	dir, main := seedDataset(t)
	_, test := seedDataset(t)
	list := filepath.Join(dir, "list.txt")
	if err := os.WriteFile(list, []byte("1111111111111111111111111111111111111111\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	prom := func(name string) string { return filepath.Join(dir, name) }
	read := func(p string) string {
		t.Helper()
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, ds := range []struct{ data, label string }{{main, "dataset=main"}, {test, "dataset=test,host=a\"b"}} {
		name := filepath.Base(filepath.Dir(ds.data))
		for _, cmd := range [][]string{{"dedup", "--data", ds.data, list}, {"status", "--data", ds.data}} {
			args := append(cmd, "--metrics-file", prom(name+"-"+cmd[0]+".prom"), "--metrics-label", ds.label)
			if _, stderr, code := runMain(t, args...); code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, stderr)
			}
		}
	}
	series := map[string]string{}
	for _, cmd := range []string{"dedup", "status"} {
		for _, ds := range []struct{ data, want string }{{main, `{dataset="main"`}, {test, `{dataset="test",host="a\"b"`}} {
			p := prom(filepath.Base(filepath.Dir(ds.data)) + "-" + cmd + ".prom")
			n := 0
			for line := range strings.Lines(read(p)) {
				if strings.HasPrefix(line, "#") {
					continue
				}
				n++
				name, _, _ := strings.Cut(line, "{")
				if !strings.HasPrefix(line[len(name):], ds.want) {
					t.Errorf("%s: %q lacks %s", p, line, ds.want)
				}
				s := line[:strings.LastIndexByte(line, ' ')]
				if other, ok := series[s]; ok {
					t.Errorf("series %s in both %s and %s", s, other, p)
				}
				series[s] = p
			}
			if n < 5 {
				t.Errorf("%s: %d samples", p, n)
			}
		}
	}
	// Locked out (75): the labelled file's last success time stays.
	p := prom(filepath.Base(filepath.Dir(main)) + "-dedup.prom")
	last := func() string {
		for line := range strings.Lines(read(p)) {
			if strings.HasPrefix(line, "infohash_dedup_last_success_timestamp_seconds{") {
				return line
			}
		}
		t.Fatalf("%s has no last_success_timestamp_seconds:\n%s", p, read(p))
		return ""
	}
	before := last()
	f := holdLock(t, main)
	fresh := filepath.Join(dir, "fresh.txt") // not applied yet: dedup takes the lock
	if err := os.WriteFile(fresh, []byte("2222222222222222222222222222222222222222\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runMain(t, "dedup", "--data", main, fresh, "--metrics-file", p, "--metrics-label", "dataset=main")
	f.Close()
	if code != 75 || !strings.Contains(read(p), `infohash_dedup_exit_status{dataset="main"} 75`) {
		t.Fatalf("dedup locked: exit %d (%s), file\n%s", code, stderr, read(p))
	}
	if after := last(); after != before {
		t.Errorf("locked run: last success %q, was %q", after, before)
	}
	for _, tt := range []struct{ label, why string }{
		{"tier=hot", "already use"},
		{"outcome=x", "already use"},
		{"__name__=x", "Prometheus's own"},
		{"data-set=x", "want letters"},
		{"dataset", "want NAME=VALUE"},
		{"dataset=", "empty value"},
		{"a=1,a=2", "given twice"},
	} {
		for _, cmd := range [][]string{{"dedup", "--data", main, list}, {"status", "--data", main}} {
			out := prom("bad.prom")
			args := append(cmd, "--metrics-file", out, "--metrics-label", tt.label)
			_, stderr, code := runMain(t, args...)
			if code != 2 || !strings.HasPrefix(stderr, "infohash: "+cmd[0]+": --metrics-label") || !strings.Contains(stderr, tt.why) {
				t.Errorf("%v: exit %d, stderr %q; want 2 and %q", args, code, stderr, tt.why)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%v wrote %s", args, out)
			}
		}
	}
}
