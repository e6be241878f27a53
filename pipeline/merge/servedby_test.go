package merge

import (
	"reflect"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// TestFailureServedByIsNoSource: fetch names in a failure row's
// served_by the peer its metadata_size and timings come from. merge must
// take that for provenance only: no torrents row (served_by goes there
// for an ok alone), no penalty for a peer peer_failures does not list
// (invalid_metadata whose bytes matched the infohash: the hash's fault),
// and the penalty of one it does list as its class says, once. The same
// rows without served_by (as fetch wrote them before) commit the same
// state, peers and torrents.
func TestFailureServedByIsNoSource(t *testing.T) {
	a, b := hashAt(0x51, 1), hashAt(0x52, 2)
	at := t0 + minute
	mergeFailures := func(named bool) string {
		dir := makeDataset(t, []schema.State{newHash(a, t0), newHash(b, t0)})
		jobs := map[schema.Hash]schema.Job{}
		for _, j := range planJobs(t, dir, t0, 2) {
			jobs[j.InfoHash] = j
		}
		big := failure(jobs[a], schema.OutcomeTooLarge, at,
			schema.PeerFailure{Addr: "127.0.0.1:7101", Class: schema.OutcomeTooLarge, At: at})
		big.MetadataSize, big.ConnectMs = 10<<20+1, new(int64(3))
		bad := failure(jobs[b], schema.OutcomeInvalidMetadata, at)
		bad.MetadataSize, bad.ConnectMs = 300, new(int64(2))
		if named {
			big.ServedBy, bad.ServedBy = "127.0.0.1:7101", "127.0.0.1:7102"
		}
		st := runMerge(t, dir, at+minute, writeResults(t, []schema.Result{big, bad}))
		if st.Applied != 2 || st.Stored != 0 || st.Torrents != 0 || st.PeerPenalties != 1 {
			t.Fatalf("served_by named %v: stats %+v: want 2 applied, nothing stored, one penalty", named, st)
		}
		return dir
	}
	dir, unnamed := mergeFailures(true), mergeFailures(false)
	if !reflect.DeepEqual(readTable[schema.Torrent](t, dir, dataset.TableTorrents), readTable[schema.Torrent](t, unnamed, dataset.TableTorrents)) {
		t.Errorf("torrents differ with served_by named")
	}
	if !reflect.DeepEqual(readTable[schema.PeerPenalty](t, dir, dataset.TablePeers), readTable[schema.PeerPenalty](t, unnamed, dataset.TablePeers)) {
		t.Errorf("peers differ with served_by named")
	}
	if !reflect.DeepEqual(stateOf(t, dir), stateOf(t, unnamed)) {
		t.Errorf("state differs with served_by named:\n%+v\n%+v", stateOf(t, dir), stateOf(t, unnamed))
	}
	if tor := readTable[schema.Torrent](t, dir, dataset.TableTorrents); len(tor) != 0 {
		t.Fatalf("torrents from failure rows: %+v", tor)
	}
	peers := readTable[schema.PeerPenalty](t, dir, dataset.TablePeers)
	if len(peers) != 1 || peers[0].Addr != "127.0.0.1:7101" || peers[0].Class != schema.OutcomeTooLarge {
		t.Fatalf("peers: %+v, want only 127.0.0.1:7101 (too_large)", peers)
	}
	state := stateOf(t, dir)
	for h, want := range map[schema.Hash]string{a: schema.OutcomeTooLarge, b: schema.OutcomeInvalidMetadata} {
		if s := state[h]; s.MetadataStatus != schema.StatusFailed || s.LastFailure != want {
			t.Errorf("%x: %s / %s, want failed / %s", h, s.MetadataStatus, s.LastFailure, want)
		}
	}
	for _, p := range state[b].AvoidPeers {
		if p == "127.0.0.1:7102" {
			t.Errorf("invalid_metadata's served_by in avoid_peers: %v", state[b].AvoidPeers)
		}
	}
}
