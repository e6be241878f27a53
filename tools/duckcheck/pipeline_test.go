package duckcheck

import (
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anacrolix/torrent/bencode"

	"github.com/infohash/infohash/tools/badpeers"
	"github.com/infohash/infohash/tools/testnet"
)

// crawl is one crawl pass of the real binary over a loopback testnet, and
// what the test knows about it.
type crawl struct {
	data string // the dataset
	obs  string // capture's observation file
	work string // the pass's other files (jobs, results, exports)
	// want maps every ground-truth hash (lowercase hex) to the fetch
	// outcome it must get (badpeers.Expected).
	want map[string]string
	// stored are the hashes some testnet node stores a peer for: capture's
	// sample_infohashes walk must find them all.
	stored map[string]bool
	// infos holds the info dictionary of every hash whose outcome is ok,
	// and peers the addresses allowed to serve it.
	infos map[string][]byte
	peers map[string][]string
	// start and end bound the run on the wall clock.
	start, end time.Time
}

// TestPipelineEndToEnd runs capture → dedup → plan-retries → fetch → merge
// against a loopback testnet holding good torrents, dead and searched-only
// hashes and a misbehaving peer of every kind, then reads every table and
// every export format back (DuckDB, or Go decoders where DuckDB has no
// reader) and compares them with the testnet's ground truth.
func TestPipelineEndToEnd(t *testing.T) {
	c := runCrawl(t)
	db := duck(t)
	t.Run("tables", func(t *testing.T) { checkTables(t, db, c) })
	t.Run("exports", func(t *testing.T) { checkExports(t, db, c) })
}

// needCommands skips the test when a subcommand is not in the binary.
func needCommands(t *testing.T, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if _, stderr, code := infohash(t, sub, "--help"); code != 0 {
			t.Skipf("`infohash %s` is not available (%s %s --help: exit %d: %.200q)", sub, infohashBin, sub, code, stderr)
		}
	}
}

// needLoopback skips the test when the machine has no usable 127.0.0.1.
func needLoopback(t *testing.T) {
	t.Helper()
	u, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no UDP on 127.0.0.1 for the testnet: %v", err)
	}
	u.Close()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no TCP on 127.0.0.1 for the testnet's peers: %v", err)
	}
	l.Close()
}

// runCrawl starts the testnet in-process (as the testnet program does with
// --bad-peers 1) and runs one crawl pass of the binary over it.
func runCrawl(t *testing.T) *crawl {
	t.Helper()
	needCommands(t, "capture", "dedup", "plan-retries", "fetch", "merge", "export")
	needLoopback(t)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	n, err := testnet.Start(context.Background(), testnet.Config{
		Nodes: 8, Seeders: 1, Torrents: 6, Dead: 2, Searched: 2, Seed: 6,
	})
	if err != nil {
		t.Fatalf("starting the testnet: %v", err)
	}
	t.Cleanup(func() { n.Close() })

	c := &crawl{infos: map[string][]byte{}, peers: map[string][]string{}}
	for _, tor := range n.Torrents() {
		if !tor.Dead {
			c.infos[tor.Hex()] = tor.InfoBytes
			c.peers[tor.Hex()] = tor.Seeders
		}
	}
	for i, b := range badpeers.Behaviours() {
		p, err := badpeers.Start(b, badpeers.Config{})
		if err != nil {
			t.Fatalf("starting a %s peer: %v", b, err)
		}
		t.Cleanup(func() { p.Close() })
		ts := []badpeers.Torrent{badpeers.NewTorrent(uint64(6000+i), 1+i%3, 4+i)}
		if b == badpeers.Good {
			ts = append(ts, awkwardTorrents()...)
			for _, tor := range ts {
				h := hex.EncodeToString(tor.InfoHash[:])
				c.infos[h], c.peers[h] = tor.Info, []string{p.Addr()}
			}
		}
		if err := badpeers.Plant(ctx, n, p, ts); err != nil {
			t.Fatalf("planting the %s peer: %v", b, err)
		}
	}
	truth := n.Truth()
	c.want = badpeers.Expected(truth)
	c.stored = truth.AllHashes()
	for h := range c.infos {
		if c.want[h] != "ok" {
			t.Fatalf("test setup: %s has metadata but ground truth %q", h, c.want[h])
		}
	}

	dir := t.TempDir()
	c.data, c.work = filepath.Join(dir, "data"), filepath.Join(dir, "work")
	if err := os.MkdirAll(c.work, 0o755); err != nil {
		t.Fatal(err)
	}
	c.obs = filepath.Join(c.work, "observations.parquet")
	jobs, results := filepath.Join(c.work, "jobs.parquet"), filepath.Join(c.work, "results.parquet")
	boot := strings.Join(truth.Bootstrap, ",")

	c.start = time.Now().Add(-time.Second).Truncate(time.Millisecond)
	stage(t, c, "capture", "--data", c.data, "--bootstrap", boot, "--dht-listen", "127.0.0.1:0",
		"--node-ids", "2", "--duration", "8s", "-o", c.obs)
	stage(t, c, "dedup", "--data", c.data, c.obs)
	stage(t, c, "plan-retries", "--data", c.data, "-o", jobs)
	// Stalling peers end at the peer timeout; the job timeout leaves DHT
	// lookups time to finish on a loaded machine.
	stage(t, c, "fetch", "--bootstrap", boot, "--timeout", "20s", "--peer-timeout", "3s",
		"--connect-timeout", "3s", "--concurrency", "64", "-o", results, jobs)
	stage(t, c, "merge", "--data", c.data, results)
	c.end = time.Now().Add(time.Second)
	return c
}

// stage runs one pipeline step with --stats-json; on failure it shows the
// step's stderr and its counters.
func stage(t *testing.T, c *crawl, name string, args ...string) {
	t.Helper()
	stats := filepath.Join(c.work, name+".json")
	args = append([]string{name, "--stats-json", stats}, args...)
	begin := time.Now()
	_, stderr, code := infohash(t, args...)
	if code != 0 {
		b, _ := os.ReadFile(stats)
		t.Fatalf("infohash %s: exit %d\nstderr:\n%s\nstats: %s", strings.Join(args, " "), code, stderr, b)
	}
	t.Logf("%s: %v", name, time.Since(begin).Round(10*time.Millisecond))
}

// awkwardNames are torrent names that text formats must quote or escape:
// separators, quotes, a line break, URL metacharacters, and bytes that are
// not UTF-8 (Latin-1).
var awkwardNames = []string{
	`comma, separated, name`,
	`she said "hi", twice ""`,
	"two\nlines, \"quoted\"",
	`Tom & Jerry + 100% fun?=#`,
	"caf\xe9 cr\xe8me, Latin-1",
	"=HYPERLINK(\"http://x\",\"y\")",
	"+1-2", "-cmd", "@SUM(A1)",
	"nul\x00in\x01the\x1fmiddle\ttab",
	"cr\ronly and crlf\r\nend",
	"line\u2028sep\u2029para",
	" leading space",
	"\\.",
	"NULL",
}

// awkwardTorrents are valid torrents with awkwardNames, alternately
// single-file and multi-file (with awkward paths too).
func awkwardTorrents() []badpeers.Torrent {
	out := make([]badpeers.Torrent, len(awkwardNames))
	for i, name := range awkwardNames {
		info := map[string]any{"name": name, "piece length": 16384}
		var total int64
		if i%2 == 0 {
			total = int64(1000 + 7919*i)
			info["length"] = total
		} else {
			files := []any{
				map[string]any{"length": int64(5000 + i), "path": []string{"dir, with comma", `file "one".txt`}},
				map[string]any{"length": int64(70000 + i), "path": []string{"two\nlines.bin"}},
			}
			total = int64(75000 + 2*i)
			info["files"] = files
		}
		pieces := make([]byte, 20*((total+16383)/16384))
		for j := range pieces {
			pieces[j] = byte(i*31 + j)
		}
		info["pieces"] = pieces
		b := bencode.MustMarshal(info)
		out[i] = badpeers.Torrent{InfoHash: sha1Sum(b), Info: b, Name: name}
	}
	return out
}

// hashKinds counts the ground-truth outcomes of a set of hashes, for
// messages.
func hashKinds(want map[string]string, hs map[string]bool) string {
	m := map[string]int{}
	for h := range hs {
		m[want[h]]++
	}
	return fmt.Sprint(m)
}
