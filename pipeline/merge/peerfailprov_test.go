package merge

import (
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// TestPeerFailureProvenanceChecked: a peer failure's class and time are
// its provenance: the class picks the endpoint's penalty, the time starts
// it (and is its peers/ row's last_at). One without a time (a hand-made or
// rewritten results file; DuckDB writes a NULL there as 0) was applied as
// a penalty that had ended in 1970, forgotten at once; one with a class no
// fetch writes was applied as no penalty at all: either way the endpoint
// went unpenalised and nothing said so. Both are bad input, nothing
// committed, as a result without attempted_at or with an unknown outcome is.
func TestPeerFailureProvenanceChecked(t *testing.T) {
	tests := []struct {
		name  string
		pf    schema.PeerFailure
		error string // "" when the result is applied
	}{
		{"whole", schema.PeerFailure{Addr: "127.0.0.1:6881", Class: schema.OutcomeRejected, At: t0 + minute}, ""},
		{"at missing", schema.PeerFailure{Addr: "127.0.0.1:6881", Class: schema.OutcomeRejected}, "peer_failures[0]: at is missing"},
		{"at before 1970", schema.PeerFailure{Addr: "127.0.0.1:6881", Class: schema.OutcomeRejected, At: -5}, "peer_failures[0]: at is missing"},
		{"class unknown", schema.PeerFailure{Addr: "127.0.0.1:6881", Class: "bogus", At: t0 + minute}, `peer_failures[0]: unknown failure class "bogus"`},
		{"class missing", schema.PeerFailure{Addr: "127.0.0.1:6881", At: t0 + minute}, `peer_failures[0]: unknown failure class ""`},
		{"class ok", schema.PeerFailure{Addr: "127.0.0.1:6881", Class: schema.OutcomeOK, At: t0 + minute}, `peer_failures[0]: unknown failure class "ok"`},
		{"class released", schema.PeerFailure{Addr: "127.0.0.1:6881", Class: schema.OutcomeReleased, At: t0 + minute}, `unknown failure class "released"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := hashAt(0x43, 1)
			dir := makeDataset(t, []schema.State{newHash(h, t0)})
			j := planJobs(t, dir, t0, 1)[0]
			res := writeResults(t, []schema.Result{failure(j, schema.OutcomeRejected, t0+minute, tt.pf)})
			_, err := tryMerge(dir, t0+2*minute, res)
			attempts := stateOf(t, dir)[h].Attempts
			peers := readTable[schema.PeerPenalty](t, dir, "peers")
			if tt.error == "" {
				if err != nil || attempts != 1 || len(peers) != 1 || peers[0].LastAt != tt.pf.At {
					t.Fatalf("err %v, attempts %d, peers %+v; want the result applied, the endpoint penalised", err, attempts, peers)
				}
				return
			}
			if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), tt.error) ||
				!strings.Contains(err.Error(), schema.Hex(h)) || attempts != 0 || len(peers) != 0 {
				t.Fatalf("err %v, attempts %d, peers %+v; want bad input %q naming the hash, nothing applied",
					err, attempts, peers, tt.error)
			}
		})
	}
}
