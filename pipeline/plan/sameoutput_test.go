package plan

import (
	"context"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/internal/exitcode"
)

// TestTwoRunsToOneOutput: of two plan-retries to the same -o FILE at
// once, the one that commits second is refused (exit 2, nothing leased),
// whether the first has published its jobs file by then or has only
// committed its leases (its file still under its temporary name; then
// --replace is refused too): every lease the dataset holds is a job of
// FILE. Each run used to read FILE once, before its first try: the
// second, overtaken by the first, planned again on the new snapshot,
// found no FILE to refuse, and renamed its file over the first's (or had
// it renamed over its own), whose jobs stayed leased to no one until
// their lease ended.
func TestTwoRunsToOneOutput(t *testing.T) {
	tests := []struct {
		name string
		// inFirst: the second run runs between the first's commit and its
		// rename; else the first runs whole within the second's first try
		// (after the second has planned, before it commits).
		inFirst bool
		replace bool
		refusal string
	}{
		{"first published while the second planned", false, false, "holds 5 jobs still leased"},
		{"second while the first renames", true, false, "another plan-retries is writing it"},
		{"second while the first renames, --replace", true, true, "another plan-retries is writing it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tenNew(t)
			first := planOptions(t, dir)
			first.Limit = 5
			second := first
			second.Replace = tt.replace
			var firstErr, secondErr error
			ran := 0
			if tt.inFirst {
				first.Committed = func(Stats) {
					ran++
					_, secondErr = Run(context.Background(), second)
				}
				_, firstErr = Run(context.Background(), first)
			} else {
				second.OpenOutput = func(path string) (*fsutil.File, error) {
					if ran++; ran == 1 {
						_, firstErr = Run(context.Background(), first)
					}
					return fsutil.CreateOutput(path)
				}
				_, secondErr = Run(context.Background(), second)
			}
			if firstErr != nil || ran == 0 {
				t.Fatalf("first run: %v (runs overlapped: %d)", firstErr, ran)
			}
			if exitcode.Of(secondErr) != exitcode.Usage || !strings.Contains(secondErr.Error(), tt.refusal) {
				t.Fatalf("second run: %v (exit %d), want exit 2 saying %q", secondErr, exitcode.Of(secondErr), tt.refusal)
			}
			ls, _ := leasesAt(t, dir)
			jobs := jobSet(readJobs(t, first.Output))
			if len(ls) != 5 || len(jobs) != 5 {
				t.Fatalf("%d leases, %d jobs in %s; want 5 of each", len(ls), len(jobs), first.Output)
			}
			for h, l := range ls {
				if j, ok := jobs[h]; !ok || j.LeaseID != l.LeaseID {
					t.Errorf("hash %x is leased (%s) but not a job of the file", h, l.LeaseID)
				}
			}
		})
	}
}
