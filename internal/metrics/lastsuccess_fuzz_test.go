package metrics

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// FuzzLastSuccess reads back a metrics file, which LastSuccess takes
// from disk as it finds it (a file of another version, edited, cut
// short): it finds 0 or a positive finite time, and that time survives
// the next run that does not succeed, which writes it again (Render with
// Run.LastSuccess), labelled or not.
func FuzzLastSuccess(f *testing.F) {
	golden, _ := filepath.Glob(filepath.Join("testdata", "*.prom"))
	for _, p := range golden {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{"", "infohash_dedup_last_success_timestamp_seconds x\n",
		"infohash_dedup_last_success_timestamp_seconds 1.5e9",
		"infohash_dedup_last_success_timestamp_seconds{dataset=\"a}b\"} 1700000000.25\n",
		"infohash_dedup_last_success_timestamp_seconds 4.9e-324\n",
		"infohash_dedup_last_success_timestamp_seconds 1e15\n"} {
		f.Add([]byte(s))
	}
	labels := []ConstLabel{{"dataset", "main"}}
	f.Fuzz(func(t *testing.T, old []byte) {
		v := LastSuccess(old, "dedup")
		if v == 0 {
			return
		}
		if !(v > 0) || math.IsInf(v, 0) {
			t.Fatalf("%q: last success %v", old, v)
		}
		b, err := Render("dedup", nil, Run{Exit: 1, LastSuccess: v})
		if err != nil {
			t.Fatal(err)
		}
		if got := LastSuccess(b, "dedup"); got != v {
			t.Fatalf("%q: last success %v written again reads as %v:\n%s", old, v, got, b)
		}
		lb, err := AddLabels(b, labels)
		if err != nil {
			t.Fatal(err)
		}
		if got := LastSuccess(lb, "dedup"); got != v {
			t.Fatalf("%q: last success %v written again with labels reads as %v:\n%s", old, v, got, lb)
		}
	})
}
