package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/tools/badpeers"
)

// TestPeerLackingOneTorrentServesTheOthers runs dedup, plan-retries,
// fetch and merge twice on a peer that serves torrents A and C but not B.
// Pass 1 fetches A and B from it: B's result is peer_lacks_torrent (the
// peer hung up on B's handshake), a fact about B only, so merge does not
// put the endpoint in peers/ and the next jobs file does not avoid it;
// pass 2 then fetches C from it. Before, B's failure was handshake_failed,
// which penalised the endpoint for an hour for every hash: pass 2 skipped
// it and C came out rejected ("all peers found are penalised").
//
// Jobs get the peer in their peers column (as a DHT lookup would find
// it), never as --peer, which is exempt from the dataset's penalties.
func TestPeerLackingOneTorrentServesTheOthers(t *testing.T) {
	a, b, c := badpeers.NewTorrent(41, 1, 5), badpeers.NewTorrent(42, 1, 5), badpeers.NewTorrent(43, 1, 5)
	peer := fetchPeer(t, badpeers.Good, a, c)
	dir := t.TempDir()
	data := filepath.Join(dir, "ih")
	now := time.Now().UTC().Truncate(time.Second)

	// Pass 1: A and B.
	dedupTorrents(t, data, dir, now, a, b)
	res := fetchPass(t, data, dir, "1", now, peer.Addr())
	if r := res[a.InfoHash]; r.Outcome != schema.OutcomeOK || r.ServedBy != peer.Addr() {
		t.Fatalf("A: outcome %s (%s), served by %q", r.Outcome, r.Detail, r.ServedBy)
	}
	rb := res[b.InfoHash]
	if rb.Outcome != schema.OutcomePeerLacksTorrent || len(rb.PeerFailures) != 1 ||
		rb.PeerFailures[0].Addr != peer.Addr() || rb.PeerFailures[0].Class != schema.OutcomePeerLacksTorrent {
		t.Fatalf("B: outcome %s (%s), peer_failures %+v; want %s from %s", rb.Outcome, rb.Detail, rb.PeerFailures,
			schema.OutcomePeerLacksTorrent, peer.Addr())
	}
	peers := string(mustRun(t, nil, "export", "--data", data, "--table", "peers", "--format", "csv", "-o", "-"))
	if strings.Contains(peers, peer.Addr()) {
		t.Fatalf("the endpoint is penalised for every hash after B's failure:\n%s", peers)
	}
	if st := stateCSV(t, data); !strings.Contains(st, schema.OutcomePeerLacksTorrent) {
		t.Errorf("B's state does not record %s:\n%s", schema.OutcomePeerLacksTorrent, st)
	}

	// Pass 2, after B's retry-soon delay (10m ± 20%): C, new, and B again.
	dedupTorrents(t, data, dir, now.Add(10*time.Minute), c)
	res = fetchPass(t, data, dir, "2", now.Add(15*time.Minute), peer.Addr())
	if r := res[c.InfoHash]; r.Outcome != schema.OutcomeOK || r.ServedBy != peer.Addr() {
		t.Fatalf("C, served by the same peer in a later pass: outcome %s (%s), served by %q", r.Outcome, r.Detail, r.ServedBy)
	}
	if r := res[b.InfoHash]; r.Outcome != schema.OutcomePeerLacksTorrent {
		t.Errorf("B again: outcome %s (%s)", r.Outcome, r.Detail)
	}
	if st := stateCSV(t, data); strings.Count(st, ",fetched,") != 2 {
		t.Errorf("want A and C fetched:\n%s", st)
	}
}

// dedupTorrents adds the torrents' hashes to the dataset as a hash list
// seen at.
func dedupTorrents(t *testing.T, data, dir string, at time.Time, ts ...badpeers.Torrent) {
	t.Helper()
	var b strings.Builder
	for _, tor := range ts {
		b.WriteString(schema.Hex(tor.InfoHash) + "\n")
	}
	list := filepath.Join(dir, "hashes.txt")
	if err := os.WriteFile(list, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, nil, "dedup", "--data", data, "--now", at.Format(time.RFC3339), list)
}

// fetchPass plans at now, gives every job peer in its peers column
// (keeping the jobs file's avoid list), fetches without a DHT and merges.
// It returns the results by hash.
func fetchPass(t *testing.T, data, dir, pass string, now time.Time, peer string) map[schema.Hash]schema.Result {
	t.Helper()
	planned := filepath.Join(dir, "planned"+pass+".parquet")
	mustRun(t, nil, "plan-retries", "--data", data, "--now", now.Format(time.RFC3339), "-o", planned)
	jr, err := rowio.Open[schema.Job](planned, nil)
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := jr.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	avoid, hasAvoid := jr.Metadata(schema.AvoidPeersKey)
	jr.Close()
	for i := range jobs {
		jobs[i].Peers = []string{peer}
	}
	in := filepath.Join(dir, "jobs"+pass+".parquet")
	w, err := rowio.Create[schema.Job](in, nil)
	if err != nil {
		t.Fatal(err)
	}
	if hasAvoid {
		if err := w.SetMetadata(schema.AvoidPeersKey, avoid); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Write(jobs); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "results"+pass+".parquet")
	mustRun(t, nil, "fetch", in, "-o", out, "--no-dht", "--dht-listen", "127.0.0.1:0", "--timeout", "1m", "--peer-timeout", "30s")
	rr, err := rowio.Open[schema.Result](out, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Close()
	rows, err := rr.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(jobs) {
		t.Fatalf("pass %s: %d results for %d jobs", pass, len(rows), len(jobs))
	}
	mustRun(t, nil, "merge", "--data", data, out)
	byHash := map[schema.Hash]schema.Result{}
	for _, r := range rows {
		byHash[r.InfoHash] = r
	}
	return byHash
}
