package fetch

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/tools/badpeers"
	"github.com/infohash/infohash/tools/testnet"
)

// TestTimingsNullWhenStageDidNotRun: a real fetch over a loopback DHT
// testnet, written as Parquet and as Arrow and read back, times only the
// stages that ran. A hash nobody announces (no_peers) and one whose peer
// went away (connect_failed) have a lookup_ms and a total_ms, but a null
// connect_ms and metadata_ms: they were 0, which avg(connect_ms) counted
// as connections made in no time, and so are handshake_ms, extension_ms
// and verify_ms. A served hash (ok) has all seven.
func TestTimingsNullWhenStageDidNotRun(t *testing.T) {
	n, err := testnet.Start(context.Background(), testnet.Config{Nodes: 8, Seeders: 1, Torrents: 1, Searched: 1, Dead: 1,
		Seed: 29, SearchEvery: -1, Reannounce: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	want := badpeers.Expected(n.Truth())
	var jobs []schema.Job
	byOutcome := map[string]int{}
	for h, outcome := range want {
		ih, _, _, err := schema.ParseHex(h)
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, schema.Job{InfoHash: ih, HashType: schema.HashV1, Attempt: 1, LeaseID: "timings"})
		byOutcome[outcome]++
	}
	if byOutcome[schema.OutcomeOK] != 1 || byOutcome[schema.OutcomeNoPeers] != 1 || byOutcome[schema.OutcomeConnectFailed] != 1 {
		t.Fatalf("testnet ground truth %v: want one ok, one no_peers, one connect_failed", byOutcome)
	}
	// Which cells are null (true) for each outcome: lookup_ms,
	// connect_ms, metadata_ms, total_ms, handshake_ms, extension_ms,
	// verify_ms.
	nulls := map[string][7]bool{
		schema.OutcomeOK:            {false, false, false, false, false, false, false},
		schema.OutcomeNoPeers:       {false, true, true, false, true, true, true},
		schema.OutcomeConnectFailed: {false, true, true, false, true, true, true},
	}
	for _, format := range []string{"parquet", "arrow"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "jobs.parquet")
			writeRows(t, in, jobs)
			o := testOptions()
			o.Input, o.Bootstrap = in, n.BootstrapAddrs()
			// Only the peers' behaviour may decide an outcome (see
			// TestMixedRunThroughDHT): queries and dials wait for
			// their answer.
			o.Timeout, o.DHTQueryTimeout, o.ConnectTimeout, o.PeerTimeout = 5*time.Minute, time.Minute, time.Minute, time.Minute
			var stdout bytes.Buffer
			if format == "arrow" {
				o.Output, o.Stdout = "-", &stdout
			} else {
				o.Output = filepath.Join(dir, "results.parquet")
			}
			if _, err := Run(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			r, err := rowio.Open[schema.Result](o.Output, &stdout)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			rows, err := r.ReadAll()
			if err != nil || len(rows) != len(jobs) {
				t.Fatalf("%d rows, %v; want %d", len(rows), err, len(jobs))
			}
			for _, row := range rows {
				w := want[schema.Hex(row.InfoHash)]
				if row.Outcome != w {
					t.Fatalf("%x: outcome %s (%s), ground truth %s", row.InfoHash, row.Outcome, row.Detail, w)
				}
				cells := []*int64{row.LookupMs, row.ConnectMs, row.MetadataMs, row.TotalMs, row.HandshakeMs, row.ExtensionMs, row.VerifyMs}
				for i, name := range []string{"lookup_ms", "connect_ms", "metadata_ms", "total_ms", "handshake_ms", "extension_ms", "verify_ms"} {
					if isNull := cells[i] == nil; isNull != nulls[w][i] {
						want := "a value"
						if nulls[w][i] {
							want = "NULL"
						}
						t.Errorf("%s: %s = %s, want %s", w, name, msText(cells[i]), want)
					}
				}
				checkStageTimings(t, row)
			}
		})
	}
}
