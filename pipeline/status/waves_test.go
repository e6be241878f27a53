package status

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
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

// TestWavesReported: a dataset with one hash due in each wave shows each
// once under its machine name in --format json and in the metrics file,
// and under its label in the text.
func TestWavesReported(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	d, err := dataset.Open(context.Background(), t.TempDir(), dataset.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	var rows []schema.State
	for i, wv := range Waves {
		in := wv.D // the wave's horizon itself is in it
		if in < 0 {
			in = 90 * 24 * time.Hour
		}
		rows = append(rows, schema.State{InfoHash: schema.Hash{0, byte(i + 1)}, MetadataStatus: "failed", Tier: "hot",
			LastFailure: "no_peers", NextRetry: now.Add(in).UnixMilli()})
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
	}
	if err := json.Unmarshal(b, &js); err != nil {
		t.Fatal(err)
	}
	prom := map[string]string{}
	for _, line := range strings.Split(string(r.Metrics(time.Second, now)), "\n") {
		if rest, ok := strings.CutPrefix(line, `infohash_status_retry_wave{wave="`); ok {
			label, value, _ := strings.Cut(rest, `"} `)
			prom[label] = value
		}
	}
	var text bytes.Buffer
	r.Print(&text)
	_, waves, _ := strings.Cut(text.String(), "retry waves (from ")

	for _, wv := range Waves {
		if n, ok := js.RetryWaves[wv.Name]; !ok || n != 1 {
			t.Errorf("retry_waves[%q] = %d (present %v), want 1", wv.Name, n, ok)
		}
		if v, ok := prom[wv.Name]; !ok || v != "1" {
			t.Errorf(`retry_wave{wave=%q} = %q (present %v), want 1`, wv.Name, v, ok)
		}
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(wv.Label) + ` +1 `).MatchString(waves) {
			t.Errorf("the text has no line %q with 1:\n%s", wv.Label, text.String())
		}
	}
	for k := range js.RetryWaves {
		if !machineName.MatchString(k) {
			t.Errorf("retry_waves key %q: not a name jq takes as .retry_waves.%s", k, k)
		}
	}
	for k := range prom {
		if !machineName.MatchString(k) {
			t.Errorf("retry_wave label %q has characters an alert rule must quote", k)
		}
	}
	if len(js.RetryWaves) != len(Waves) || len(prom) != len(Waves) {
		t.Errorf("retry_waves %v and metrics labels %v: want exactly the %d waves", js.RetryWaves, prom, len(Waves))
	}
}
