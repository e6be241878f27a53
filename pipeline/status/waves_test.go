package status

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// machineName is what a wave's name must be to serve as a jq key
// (.retry_waves.NAME) and an alert rule's label value without quoting.
var machineName = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// TestWaveNames: every wave has a distinct machine name and a distinct
// label for people, and a next retry falls in the wave its horizon says.
func TestWaveNames(t *testing.T) {
	names, labels := map[string]bool{}, map[string]bool{}
	for _, wv := range Waves {
		if !machineName.MatchString(wv.Name) {
			t.Errorf("wave %q: not a name jq and alert rules take as it is (%s)", wv.Name, machineName)
		}
		if names[wv.Name] || labels[wv.Label] {
			t.Errorf("wave %q (%q) named twice", wv.Name, wv.Label)
		}
		names[wv.Name], labels[wv.Label] = true, true
	}
	ms := func(d time.Duration) int64 { return d.Milliseconds() }
	for _, tt := range []struct {
		in   int64
		want string
	}{
		{ms(-time.Hour), "overdue"},
		{0, "overdue"},
		{1, "within_1h"},
		{ms(time.Hour), "within_1h"},
		{ms(time.Hour) + 1, "within_1d"},
		{ms(24 * time.Hour), "within_1d"},
		{ms(24*time.Hour) + 1, "within_7d"},
		{ms(7 * 24 * time.Hour), "within_7d"},
		{ms(7*24*time.Hour) + 1, "within_30d"},
		{ms(30 * 24 * time.Hour), "within_30d"},
		{ms(30*24*time.Hour) + 1, "later"},
	} {
		if got := wave(tt.in); got != tt.want {
			t.Errorf("wave(%d ms) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestWavesReported: a dataset with hashes due in each wave, of each tier
// and kind (n of the nth pair), shows them under the wave's machine name in
// --format json and the metrics file, and under its label in the text, in
// the pair's column; retry_waves sums the pairs.
func TestWavesReported(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	d, err := dataset.Open(context.Background(), t.TempDir(), dataset.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	type pair struct{ tier, kind string }
	var pairs []pair
	for _, tier := range WaveTiers {
		for _, kind := range WaveKinds {
			pairs = append(pairs, pair{tier, kind})
		}
	}
	status := map[string]string{KindRetry: "failed", KindNew: "new"}
	var rows []schema.State
	for i, wv := range Waves {
		in := wv.D // the wave's horizon itself is in it
		if in < 0 {
			in = 90 * 24 * time.Hour
		}
		for j, p := range pairs {
			for k := range j + 1 {
				rows = append(rows, schema.State{InfoHash: schema.Hash{0, byte(i + 1), byte(j), byte(k)},
					MetadataStatus: status[p.kind], Tier: p.tier, NextRetry: now.Add(in).UnixMilli(), HashType: 1})
			}
		}
	}
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	fi, err := dataset.WriteStaged(tx, dataset.TableState, "00", rows)
	if err != nil {
		t.Fatal(err)
	}
	tx.SetPartition(dataset.TableState, "00", []dataset.FileInfo{fi})
	if _, err := tx.Commit(context.Background(), dataset.CommitOptions{Writer: "test"}); err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), d.Dir, now, Options{})
	if err != nil {
		t.Fatal(err)
	}

	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var js struct {
		RetryWaves map[string]int64 `json:"retry_waves"`
		By         WavesBy          `json:"retry_waves_by_tier_and_kind"`
	}
	if err := json.Unmarshal(b, &js); err != nil {
		t.Fatal(err)
	}
	prom := map[string]string{} // tier,kind,wave: value
	sample := regexp.MustCompile(`^infohash_status_retry_wave\{tier="([^"]*)",kind="([^"]*)",wave="([^"]*)"\} (\S+)$`)
	for _, line := range strings.Split(string(r.Metrics(time.Second, now, 0)), "\n") {
		if m := sample.FindStringSubmatch(line); m != nil {
			prom[m[1]+","+m[2]+","+m[3]] = m[4]
		}
	}
	var text bytes.Buffer
	r.Print(&text)
	_, waves, _ := strings.Cut(text.String(), "retry waves (from ")
	if !regexp.MustCompile(`(?m)^ +hot retry +hot new +cold retry +cold new$`).MatchString(waves) {
		t.Errorf("the text has no header naming the columns hot retry, hot new, cold retry, cold new:\n%s", text.String())
	}

	for _, wv := range Waves {
		if n, ok := js.RetryWaves[wv.Name]; !ok || n != 10 {
			t.Errorf("retry_waves[%q] = %d (present %v), want 10", wv.Name, n, ok)
		}
		for j, p := range pairs {
			want := int64(j + 1)
			if n := js.By[p.tier][p.kind][wv.Name]; n != want {
				t.Errorf("retry_waves_by_tier_and_kind.%s.%s.%s = %d, want %d", p.tier, p.kind, wv.Name, n, want)
			}
			key := p.tier + "," + p.kind + "," + wv.Name
			if v, ok := prom[key]; !ok || v != strconv.FormatInt(want, 10) {
				t.Errorf(`retry_wave{tier=%q,kind=%q,wave=%q} = %q (present %v), want %d`, p.tier, p.kind, wv.Name, v, ok, want)
			}
		}
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(wv.Label) + ` +1 +2 +3 +4$`).MatchString(waves) {
			t.Errorf("the text has no line %q with 1 2 3 4:\n%s", wv.Label, text.String())
		}
	}
	for k := range js.RetryWaves {
		if !machineName.MatchString(k) {
			t.Errorf("retry_waves key %q: not a name jq takes as .retry_waves.%s", k, k)
		}
	}
	for k := range prom {
		for _, v := range strings.Split(k, ",") {
			if !machineName.MatchString(v) {
				t.Errorf("retry_wave label value %q has characters an alert rule must quote", v)
			}
		}
	}
	if len(js.RetryWaves) != len(Waves) || len(prom) != len(Waves)*len(pairs) {
		t.Errorf("retry_waves %v and metrics labels %v: want exactly the %d waves, each of %d tiers and kinds", js.RetryWaves, prom, len(Waves), len(pairs))
	}
}
