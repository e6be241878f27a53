package dedup

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/internal/exitcode"
)

// TestPrecheckPeerColumns: with inputs in several commits and announced
// peers kept, a second input whose node_addr pages are bad is refused by
// the precheck, before the first is applied (exit 2, nothing committed),
// as the read of a single input refuses it at its open; without peers,
// node_addr is not read and both inputs are applied.
func TestPrecheckPeerColumns(t *testing.T) {
	dir := t.TempDir()
	good := writeObs(t, dir, genObs(31, 5000, 2000))
	bad := badNodeAddrPage(t, dir)
	for _, c := range []struct {
		name    string
		peers   bool
		code    int
		commits int
	}{
		{"announced peers", true, exitcode.Usage, 0},
		{"no announced peers", false, exitcode.OK, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ds")
			st, err := run(t, data, func(o *Options) { o.BatchHashes, o.AnnouncedPeers = 1, c.peers }, good, bad)
			if got := exitcode.Of(err); got != c.code {
				t.Fatalf("exit %d (%v), want %d", got, err, c.code)
			}
			if st.Commits != c.commits {
				t.Fatalf("%d commits, want %d (%v)", st.Commits, c.commits, err)
			}
			if err == nil {
				return
			}
			want := `column "node_addr": pages hold more values than the row group's 1000 rows`
			if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), filepath.Base(bad)) {
				t.Fatalf("err = %v, want %q naming the input", err, want)
			}
			if s := readState(t, data); len(s) > 0 {
				t.Fatalf("state holds %d hashes after %q", len(s), err)
			}
		})
	}
}
