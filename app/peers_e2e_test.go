package app

import (
	"encoding/csv"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/tools/badpeers"
	"github.com/infohash/infohash/tools/testnet"
)

// TestAnnouncedPeerReachesFetch runs dedup, plan-retries, fetch and merge
// on a loopback DHT that knows nothing of a torrent whose only seeder
// announced it to our capture: observations with announce_peer rows (the
// seeder's IP as node_addr, its port as peer_port; and one from an
// endpoint that is gone) → the state's peers → the jobs file's peers →
// fetch, whose DHT lookup finds no one, reaches the seeder through the
// job's peers alone → merge drops the endpoint that failed from the
// hash's peers. Without the jobs' peers (a hash list, as every job was
// before) the same fetch finds no peers.
func TestAnnouncedPeerReachesFetch(t *testing.T) {
	n, err := testnet.Start(t.Context(), testnet.Config{Seed: 17, Nodes: 8, Torrents: -1, SearchEvery: -1, Reannounce: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	boot := strings.Join(n.BootstrapAddrs(), ",")
	tor := badpeers.NewTorrent(71, 1, 5)
	seeder := fetchPeer(t, badpeers.Good, tor)
	gone, err := net.Listen("tcp", "127.0.0.1:0") // an endpoint nobody listens on once closed
	if err != nil {
		t.Fatal(err)
	}
	goneAddr := gone.Addr().(*net.TCPAddr)
	gone.Close()

	dir := t.TempDir()
	data := filepath.Join(dir, "ih")
	now := time.Now().UTC().Truncate(time.Second)
	at := func(d time.Duration) int64 { return now.Add(d).UnixMilli() }
	obs := func(source, node string, port int, ms int64) schema.Observation {
		return schema.Observation{InfoHash: tor.InfoHash, HashType: schema.HashV1, ObservedAt: ms, Source: source,
			NodeAddr: node, PeerPort: int32(port), RunID: "e2e"}
	}
	seederPort := seeder.TCPAddr().Port
	rows := []schema.Observation{
		obs(schema.SourceGetPeers, "127.0.0.1:40001", 0, at(-3*time.Minute)), // a lookup: no peer
		// The seeder announces from its DHT port (implied_port 0: the
		// port it names is its TCP one).
		obs(schema.SourceAnnouncePeer, "127.0.0.1:40002", seederPort, at(-2*time.Minute)),
		obs(schema.SourceAnnouncePeer, "127.0.0.1:40003", goneAddr.Port, at(-time.Minute)),
	}
	path := filepath.Join(dir, "observations.parquet")
	writeRows(t, path, rows)
	stamp := now.Format(time.RFC3339)
	mustRun(t, nil, "dedup", "--data", data, "--announced-peers", "--now", stamp, path)
	wantPeers := []string{goneAddr.String(), seeder.Addr()} // newest first
	if got := statePeers(t, data, tor.InfoHash); !slices.Equal(got, wantPeers) {
		t.Fatalf("state peers %q, want %q", got, wantPeers)
	}

	jobsPath := filepath.Join(dir, "jobs.parquet")
	mustRun(t, nil, "plan-retries", "--data", data, "--now", stamp, "-o", jobsPath)
	jobs := readRows[schema.Job](t, jobsPath)
	if len(jobs) != 1 || !slices.Equal(jobs[0].Peers, wantPeers) {
		t.Fatalf("jobs %+v, want one with peers %q", jobs, wantPeers)
	}

	fetch := func(in, out string) schema.Result {
		t.Helper()
		mustRun(t, nil, "fetch", in, "-o", out, "--bootstrap", boot, "--dht-listen", "127.0.0.1:0",
			"--timeout", "20s", "--connect-timeout", "5s", "--peer-timeout", "10s")
		res := readRows[schema.Result](t, out)
		if len(res) != 1 {
			t.Fatalf("%d results", len(res))
		}
		return res[0]
	}
	// The control: the DHT cannot find the seeder.
	list := filepath.Join(dir, "hash.txt")
	if err := os.WriteFile(list, []byte(schema.Hex(tor.InfoHash)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := fetch(list, filepath.Join(dir, "control.parquet")); r.Outcome != schema.OutcomeNoPeers {
		t.Fatalf("without the job's peers: outcome %s (%s), want %s", r.Outcome, r.Detail, schema.OutcomeNoPeers)
	}
	results := filepath.Join(dir, "results.parquet")
	r := fetch(jobsPath, results)
	if r.Outcome != schema.OutcomeOK || r.ServedBy != seeder.Addr() {
		t.Fatalf("with the job's peers: outcome %s (%s), served by %q; want ok from %s", r.Outcome, r.Detail, r.ServedBy, seeder.Addr())
	}
	if !slices.ContainsFunc(r.PeerFailures, func(pf schema.PeerFailure) bool { return pf.Addr == goneAddr.String() }) {
		// Both are dialled at once; the seeder may answer before the
		// dead endpoint is refused (then it is cut off, not failed).
		t.Logf("the gone endpoint did not fail before the seeder served: %+v", r.PeerFailures)
		return
	}
	mustRun(t, nil, "merge", "--data", data, "--now", stamp, results)
	if got, want := statePeers(t, data, tor.InfoHash), []string{seeder.Addr()}; !slices.Equal(got, want) {
		t.Fatalf("after merge: peers %q, want %q (the endpoint that failed dropped)", got, want)
	}
}

// statePeers is the peers column of hash h in export --table state
// --format csv (a JSON list).
func statePeers(t *testing.T, data string, h schema.Hash) []string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(stateCSV(t, data))).ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("state csv: %v %q", err, recs)
	}
	col := slices.Index(recs[0], "peers")
	if col < 0 {
		t.Fatalf("no peers column in %q", recs[0])
	}
	for _, r := range recs[1:] {
		if r[0] == schema.Hex(h) {
			var out []string
			for _, s := range strings.Split(strings.Trim(r[col], "[]"), ",") {
				if s != "" {
					u, err := strconv.Unquote(s)
					if err != nil {
						t.Fatalf("peers %s: %v", r[col], err)
					}
					out = append(out, u)
				}
			}
			return out
		}
	}
	t.Fatalf("no row for %s", schema.Hex(h))
	return nil
}
