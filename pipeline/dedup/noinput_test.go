package dedup

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/internal/exitcode"
)

// TestBareRunNamesLiveSpools: a dedup given no INPUT while another run
// still spools its stdin into DIR/inbox/, or holds the whole spool it is
// about to apply, exits 2 saying so and that there is nothing to do but
// wait for it: the line said only "holds nothing left to apply". With
// no such spool, it is the plain errNoInput.
func TestBareRunNamesLiveSpools(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	if _, err := run(t, data, nil, writeObs(t, dir, genObs(3, 20, 10))); err != nil {
		t.Fatal(err)
	}
	inbox := filepath.Join(data, "inbox")
	tests := []struct {
		name  string
		start func(t *testing.T) (path string) // a live run's spool, held until the test ends
		want  string                           // after the path, in the error
	}{
		{"nothing", nil, ""},
		{"spooling", func(t *testing.T) string {
			return datasettest.LiveSpool(t, inbox, ".spool")
		}, " (status: spooling), which it applies itself once that input ends: nothing to do here but wait for that run)"},
		{"applying", func(t *testing.T) string {
			p, release, err := dataset.SpoolHeld(inbox, ".spool", strings.NewReader(strings.Repeat("1", 40)+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(release)
			return p
		}, ": nothing to do here but wait for that run)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := ""
			if tt.start != nil {
				path = tt.start(t)
			}
			_, err := run(t, data, nil)
			if exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("bare dedup: %v (exit %d); want exit %d", err, exitcode.Of(err), exitcode.Usage)
			}
			if path == "" {
				if !errors.Is(err, errNoInput) {
					t.Fatalf("bare dedup: %v; want %v", err, errNoInput)
				}
				return
			}
			if msg := err.Error(); !strings.Contains(msg, "holds nothing left to apply; another run is ") ||
				!strings.Contains(msg, path+tt.want) {
				t.Fatalf("bare dedup: %q; want it to name %s, then %q", msg, path, tt.want)
			}
		})
	}
}
