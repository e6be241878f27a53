package merge

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// TestBareRunNamesLiveSpools: a merge given no RESULTS while another
// merge still spools its stdin into DIR/inbox/merge/, or holds the whole
// spool it is about to apply, exits 2 saying so and that there is
// nothing to do but wait for it, as dedup's bare run does: it said only
// "no input". With no such spool, it is the plain "no input".
func TestBareRunNamesLiveSpools(t *testing.T) {
	tests := []struct {
		name  string
		start func(t *testing.T, inbox string) (path string) // a live run's spool in inbox, held until the test ends
		want  string                                         // after the path, in the error
	}{
		{"nothing", nil, ""},
		{"spooling", func(t *testing.T, inbox string) string {
			return datasettest.LiveSpool(t, inbox, ".results")
		}, " (status: spooling), which it applies itself once that input ends: nothing to do here but wait for that run)"},
		{"applying", func(t *testing.T, inbox string) string {
			p, release, err := dataset.SpoolHeld(inbox, ".results", strings.NewReader("not read"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(release)
			return p
		}, ": nothing to do here but wait for that run)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := makeDataset(t, []schema.State{newHash(hashAt(1, 1), t0)})
			path := ""
			if tt.start != nil {
				path = tt.start(t, filepath.Join(dir, inboxDir))
			}
			o := DefaultOptions()
			o.Data, o.Now = dir, tm(t0+minute)
			_, err := Run(context.Background(), o)
			if exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("bare merge: %v (exit %d); want exit %d", err, exitcode.Of(err), exitcode.Usage)
			}
			if path == "" {
				if err.Error() != "merge: no input (name results files, folders, or - for stdin)" {
					t.Fatalf("bare merge: %v; want the plain no input", err)
				}
				return
			}
			if msg := err.Error(); !strings.Contains(msg, "holds nothing left to apply; another run is ") ||
				!strings.Contains(msg, path+tt.want) {
				t.Fatalf("bare merge: %q; want it to name %s, then %q", msg, path, tt.want)
			}
		})
	}
}
