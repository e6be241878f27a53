package status

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
)

// TestUnappliedWork: the work files crawl-pass left under DIR/work/PASS/
// without their FILE.applied marker (a dedup that failed with exit 1
// leaves one more each pass) are listed in text, JSON and metrics, in
// pass order; marked ones, other files, dot folders and a dataset without
// DIR/work are not. status used to say nothing of them.
func TestUnappliedWork(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name  string
		files []string // under DIR/work, each written with "x"
		want  []string // unapplied, under DIR/work
	}{
		{"no work folder", nil, nil},
		{"all applied", []string{
			"20260601T0000Z/observations.parquet", "20260601T0000Z/observations.parquet.applied",
			"20260601T0000Z/results.parquet", "20260601T0000Z/results.parquet.applied",
			"20260601T0000Z/capture.json", "jobs.parquet",
		}, nil},
		{"dedup failed in two passes", []string{
			"20260601T0010Z/observations.parquet",
			"20260601T0000Z/observations.parquet", "20260601T0000Z/results.parquet", "20260601T0000Z/results.parquet.applied",
		}, []string{"20260601T0000Z/observations.parquet", "20260601T0010Z/observations.parquet"}},
		{"merge not applied", []string{
			"20260601T0000Z/observations.parquet", "20260601T0000Z/observations.parquet.applied",
			"20260601T0000Z/results.parquet",
		}, []string{"20260601T0000Z/results.parquet"}},
		{"dot folder and marker alone", []string{
			".old/observations.parquet", "20260601T0000Z/results.parquet.applied",
		}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := dataset.Open(context.Background(), t.TempDir(), dataset.OpenOptions{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			d.Close()
			work := filepath.Join(d.Dir, "work")
			for _, f := range tt.files {
				p := filepath.Join(work, filepath.FromSlash(f))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want := []string{}
			for _, f := range tt.want {
				want = append(want, filepath.Join(work, filepath.FromSlash(f)))
			}
			r, err := Run(context.Background(), d.Dir, now, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			r.Print(&out)
			var lines []string
			for l := range strings.Lines(out.String()) {
				if strings.HasPrefix(l, "unapplied work") {
					lines = append(lines, l)
				}
			}
			if len(lines) != len(want) {
				t.Fatalf("text has %d unapplied work lines, want %d:\n%s", len(lines), len(want), out.String())
			}
			for i, p := range want {
				stage := "dedup"
				if filepath.Base(p) == "results.parquet" {
					stage = "merge"
				}
				w := "unapplied work (a crawl-pass file that " + stage + " has not committed: a pass that stopped or failed left it " +
					"for the next pass to apply, or a pass running now has yet to apply it): " + p + "\n"
				if lines[i] != w {
					t.Errorf("line %d\n%swant\n%s", i, lines[i], w)
				}
			}
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Work []string `json:"unapplied_work"`
			}
			if err := json.Unmarshal(b, &got); err != nil || got.Work == nil || !slices.Equal(got.Work, want) {
				t.Fatalf("JSON unapplied_work %q (%v), want %q: %s", got.Work, err, want, b)
			}
			gauge := "\ninfohash_status_unapplied_work_files " + formatValue(float64(len(want))) + "\n"
			if m := string(r.Metrics(time.Second, now, 0)); !strings.Contains(m, gauge) {
				t.Fatalf("metrics lack%s%s", gauge, m)
			}
		})
	}
}

// TestJobsLeftUnfetched: a jobs file crawl-pass left at DIR/work/jobs.parquet
// (fetch exit 75 put it back; a pass killed before it moved it) is work
// waiting while its leases are live (jobs.parquet.lease_until after now),
// listed after the passes' files with the stages that apply it; one whose
// leases have ended, or that lacks the record, the next pass plans over,
// and a pass folder's own jobs.parquet was fetched: neither is listed.
// status used to say nothing of it.
func TestJobsLeftUnfetched(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name  string
		until string // jobs.parquet.lease_until's content; "" none
		want  bool
	}{
		{"leases live", "2026-06-01T01:00:00.5Z\n", true},
		{"leases ended", "2026-05-31T23:00:00Z\n", false},
		{"no lease_until", "", false},
		{"lease_until unreadable", "soon\n", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := dataset.Open(context.Background(), t.TempDir(), dataset.OpenOptions{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			d.Close()
			work := filepath.Join(d.Dir, "work")
			files := map[string]string{"jobs.parquet": "x", "20260601T0000Z/jobs.parquet": "x"}
			if tt.until != "" {
				files["jobs.parquet.lease_until"] = tt.until
			}
			for f, body := range files {
				p := filepath.Join(work, filepath.FromSlash(f))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			r, err := Run(context.Background(), d.Dir, now, Options{})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{}
			if tt.want {
				want = append(want, filepath.Join(work, "jobs.parquet"))
			}
			if !slices.Equal(r.UnappliedWork, want) {
				t.Fatalf("unapplied work %q, want %q", r.UnappliedWork, want)
			}
			var out bytes.Buffer
			r.Print(&out)
			line := "unapplied work (a crawl-pass file that fetch, then merge, has not committed"
			if strings.Contains(out.String(), line) != tt.want {
				t.Errorf("text: want a line %q: %v\n%s", line, tt.want, out.String())
			}
			gauge := "\ninfohash_status_unapplied_work_files " + formatValue(float64(len(want))) + "\n"
			if m := string(r.Metrics(time.Second, now, 0)); !strings.Contains(m, gauge) {
				t.Fatalf("metrics lack%s%s", gauge, m)
			}
		})
	}
}
