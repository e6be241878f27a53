package merge

import (
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// TestPeerFailureAddressChecked: a peer failure's endpoint becomes a row
// of peers/ and a line of every jobs file's avoid list, so one that is
// not host:port (a hand-made or rewritten results file) is bad input,
// nothing committed; it was stored as given.
func TestPeerFailureAddressChecked(t *testing.T) {
	tests := []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:6881", true},
		{"[::1]:6881", true},
		{"peer.example:51413", true},
		{"not an address", false},
		{"10.0.0.1", false},
		{"", false},
		{"a b:1", false},
		{"1.2.3.4:1\n5.6.7.8:2", false},
		{strings.Repeat("h", 300) + ":1", false},
		{"bad\xffhost:1", false}, // the peers table's addr is a STRING
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			h := hashAt(0x42, 1)
			dir := makeDataset(t, []schema.State{newHash(h, t0)})
			j := planJobs(t, dir, t0, 1)[0]
			res := writeResults(t, []schema.Result{failure(j, schema.OutcomeNoPeers, t0+minute,
				schema.PeerFailure{Addr: tt.addr, Class: schema.OutcomeConnectFailed, At: t0 + minute})})
			_, err := tryMerge(dir, t0+2*minute, res)
			attempts := stateOf(t, dir)[h].Attempts
			if tt.ok {
				if err != nil || attempts != 1 {
					t.Fatalf("err %v, attempts %d; want the result applied", err, attempts)
				}
				return
			}
			if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "is not a peer endpoint") || attempts != 0 {
				t.Fatalf("err %v, attempts %d; want bad input and nothing applied", err, attempts)
			}
		})
	}
}

// TestServedByMustBeUTF8: an ok result's served_by goes into the torrents
// table, a STRING column that DuckDB refuses to read with other bytes in
// it: a results file whose served_by is not UTF-8 is bad input.
func TestServedByMustBeUTF8(t *testing.T) {
	info, h := torrentInfo("served")
	dir := makeDataset(t, []schema.State{newHash(h, t0)})
	j := planJobs(t, dir, t0, 1)[0]
	r := success(j, info, t0+minute)
	r.ServedBy = "bad\xffpeer:1"
	_, err := tryMerge(dir, t0+2*minute, writeResults(t, []schema.Result{r}))
	want := `served_by "bad\xffpeer:1" is not valid UTF-8`
	if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), want) {
		t.Fatalf("err %v; want bad input %q", err, want)
	}
	if st := stateOf(t, dir)[h]; st.MetadataStatus != schema.StatusNew {
		t.Fatalf("status %s: the result was applied", st.MetadataStatus)
	}
}
