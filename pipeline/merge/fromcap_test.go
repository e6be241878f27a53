package merge

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// TestFromStateBounds: merge --from reads the other dataset's state
// within fixed bounds on its string values (fromBound): a value a byte
// over its bound is refused by its row, one far over by its page's
// header, bad input naming the file, the row or rows, the column, the
// size and the bound; nothing is committed. At the bound it is unioned.
// A list longer than any writer keeps (avoid_peers 16, peers 8) is
// refused alike, by its count of entries.
func TestFromStateBounds(t *testing.T) {
	h := hashAt(0x07, 1)
	hex := schema.Hex(h)
	host := func(n int) string { return strings.Repeat("h", n-5) + ":6881" } // n bytes
	row := func(f func(*schema.State)) schema.State {
		s := failedAt(t, h, t0, t0+hour/2)
		f(s2p(&s))
		return s
	}
	tests := []struct {
		name string
		row  schema.State
		want string // after "merge --from: FILE: ", "" to be unioned
	}{
		{"last_source at the bound", row(func(s *schema.State) { s.LastSource = strings.Repeat("s", 256) }), ""},
		{"last_source a byte over", row(func(s *schema.State) { s.LastSource = strings.Repeat("s", 257) }),
			"row 1: " + hex + ": last_source of 257 bytes, over its bound of 256 bytes"},
		{"last_source of 1 MiB", row(func(s *schema.State) { s.LastSource = strings.Repeat("s", 1<<20) }),
			"row group 0: a page of last_source declares 1048580 bytes for 1 value, over 256 bytes a value (last_source's bound)"},
		{"last_failure a byte over", row(func(s *schema.State) { s.LastFailure = strings.Repeat("f", 65) }),
			"row 1: " + hex + ": last_failure of 65 bytes, over its bound of 64 bytes"},
		{"avoid_peers at the bound", row(func(s *schema.State) { s.AvoidPeers = []string{"127.0.0.1:1", host(262)} }), ""},
		{"avoid_peers a byte over", row(func(s *schema.State) { s.AvoidPeers = []string{"127.0.0.1:1", host(263)} }),
			"row 1: " + hex + ": avoid_peers[1] of 263 bytes, over its bound of 262 bytes"},
		{"peers a byte over", row(func(s *schema.State) { s.Peers = []string{host(263)} }),
			"row 1: " + hex + ": peers[0] of 263 bytes, over its bound of 262 bytes"},
		{"peers of 64 KiB", row(func(s *schema.State) { s.Peers = []string{host(64 << 10)} }),
			"row group 0: a page of peers.list.element declares 65"},
		{"avoid_peers of 16 entries", row(func(s *schema.State) { s.AvoidPeers = endpoints(16) }), ""},
		{"avoid_peers of 17 entries", row(func(s *schema.State) { s.AvoidPeers = endpoints(17) }),
			"row 1: " + hex + ": avoid_peers of 17 entries, over its bound of 16 entries"},
		{"peers of 8 entries", row(func(s *schema.State) { s.Peers = endpoints(8) }), ""},
		{"peers of 9 entries", row(func(s *schema.State) { s.Peers = endpoints(9) }),
			"row 1: " + hex + ": peers of 9 entries, over its bound of 8 entries"},
		{"peers of 200,000 entries", row(func(s *schema.State) { s.Peers = endpoints(200_000) }),
			"row 1: " + hex + ": peers of 200000 entries, over its bound of 8 entries"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			other := makeDataset(t, []schema.State{tt.row})
			if strings.HasSuffix(tt.want, "declares 65") { // the page's size depends on its levels
				fromRefusedPrefix(t, other, tt.want, "over 262 bytes a value (peers's bound)")
				return
			}
			fromRefused(t, other, "state/v/*/*/*.parquet", tt.want, true, 0)
		})
	}
}

func s2p(s *schema.State) *schema.State { return s }

// endpoints are n distinct peer endpoints.
func endpoints(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("10.%d.%d.%d:6881", i>>16&255, i>>8&255, i&255)
	}
	return out
}

// fromRefusedPrefix is fromRefused for an error of the state table known
// by its start and end.
func fromRefusedPrefix(t *testing.T, other, start, end string) {
	t.Helper()
	dir := makeDataset(t, nil)
	before := datasettest.Snapshot(t, dir)
	o := DefaultOptions()
	o.Data, o.From, o.Now = dir, other, tm(t0+2*hour)
	_, err := Run(context.Background(), o)
	files, _ := filepath.Glob(filepath.Join(other, "state", "v", "*", "*", "*.parquet"))
	if len(files) != 1 {
		t.Fatalf("the other dataset's state files: %v", files)
	}
	start = "merge --from: " + files[0] + ": " + start
	if exitcode.Of(err) != exitcode.Usage || !strings.HasPrefix(err.Error(), start) || !strings.HasSuffix(err.Error(), end) {
		t.Fatalf("err = %v\nwant bad input %q ... %q", err, start, end)
	}
	if datasettest.Snapshot(t, dir) != before {
		t.Fatal("the refused union changed the dataset")
	}
}

// TestFromPeersBounds: the other dataset's peers table is read within
// the same bounds (addr an endpoint's, class a class name's).
func TestFromPeersBounds(t *testing.T) {
	host := func(n int) string { return strings.Repeat("h", n-5) + ":6881" }
	pen := func(addr, class string) schema.PeerPenalty {
		return schema.PeerPenalty{Addr: addr, Class: class, Until: t0 + 3*hour, Failures: 1, LastAt: t0 + hour}
	}
	tests := []struct {
		name string
		row  schema.PeerPenalty
		want string
	}{
		{"addr at the bound", pen(host(262), schema.OutcomeConnectFailed), ""},
		{"addr a byte over", pen(host(263), schema.OutcomeConnectFailed), "row 1: addr of 263 bytes, over its bound of 262 bytes"},
		{"addr of 64 KiB", pen(host(64<<10), schema.OutcomeConnectFailed),
			"rows 1-1: a page of addr declares 65543 bytes for 1 value, over 262 bytes a value (addr's bound)"},
		{"class a byte over", pen("127.0.0.1:1", strings.Repeat("c", 65)), "row 1: class of 65 bytes, over its bound of 64 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			other := makeDataset(t, []schema.State{newHash(hashAt(0x07, 1), t0)})
			addTables(t, other, nil, []schema.PeerPenalty{tt.row}, nil, nil)
			fromRefused(t, other, "peers/v/*/*.parquet", tt.want, true, 0)
		})
	}
}

// TestFromFileRows: a file of the other dataset holding another number
// of rows than its manifest says is refused (damage: exit 1), naming it.
func TestFromFileRows(t *testing.T) {
	other := makeDataset(t, []schema.State{newHash(hashAt(0x07, 1), t0), newHash(hashAt(0x07, 2), t0)})
	cur, err := os.ReadFile(filepath.Join(other, "CURRENT"))
	if err != nil {
		t.Fatal(err)
	}
	mp := filepath.Join(other, "manifests", strings.TrimSpace(string(cur)))
	if _, err := os.Stat(mp); err != nil {
		mp += ".json"
	}
	raw, err := os.ReadFile(mp)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"rows": 2,`) {
		t.Fatalf("manifest %s has no state file of 2 rows:\n%s", mp, raw)
	}
	if err := os.WriteFile(mp, []byte(strings.Replace(string(raw), `"rows": 2,`, `"rows": 3,`, 1)), 0o666); err != nil {
		t.Fatal(err)
	}
	fromRefused(t, other, "state/v/*/*/*.parquet", "2 rows, the manifest says 3", false, 0)
}
